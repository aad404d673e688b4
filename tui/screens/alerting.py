"""Alerts in the app: the watch screen hands this module its panes' recent records and the A/B
verdict each tick; it feeds :class:`tui.core.alerts.engine.AlertEngine` and says what to show.

No Textual import: the screen does the showing (:meth:`AppAlerts.show` calls its ``notify``,
``bell`` and mark methods), so the evaluation can be tested without an app.

Records are read from each pane's history (:class:`tui.panes.state.Point`: ``seq``, ``timestamp``,
``segment`` and the metrics), only the ones not seen yet; a pane whose numbering starts over
(statistics reset) is read again from its start. Records without a time of their own are
timed by the local clock when the tick sees them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tui.core.alerts.engine import Alert, AlertEngine, local_now

NEW_SEGMENT_HINT = "press n to start a new segment"


class AppAlerts:
    def __init__(self, engine: AlertEngine, labels: Sequence[str], command: Any = None) -> None:
        self.engine = engine
        self.command = command  # tui.cli.alert_args.AlertCommand (--on-alert), or None
        self.labels = list(labels)
        self._seen = [0] * len(self.labels)  # the last Point.seq read, per pane
        self.raised: list[Alert] = []  # every alert so far (the newest last)

    def poll(
        self, histories: Sequence[Sequence[Any]], synthetic: Sequence[set[int]] | None = None
    ) -> list[Alert]:
        """The alerts raised by the records added to each pane's history since the last poll.
        ``synthetic``: per pane, the segments of a synthetic acceptance run (a benchmarking mode):
        their records are no measurement, no rule sees them."""
        out: list[Alert] = []
        now = local_now()
        for i, (label, history) in enumerate(zip(self.labels, histories)):
            skip = synthetic[i] if synthetic is not None else set()
            if not history:
                continue
            if history[-1].seq < self._seen[i]:  # the pane started over
                self._seen[i] = 0
            seen = self._seen[i]
            if history[-1].seq == seen:
                continue
            start = len(history)
            while start > 0 and history[start - 1].seq > seen:  # newest first: cheap when few are new
                start -= 1
            for k in range(start, len(history)):
                p = history[k]
                if p.segment not in skip:
                    out += self.engine.observe_record(label, p, p.segment, now)
            self._seen[i] = history[-1].seq
        return self._raised(out)

    def verdict(self, a: str, b: str, verdict: str | None) -> list[Alert]:
        if verdict is None:
            return []
        return self._raised(self.engine.verdict(a, b, verdict, local_now()))

    def _raised(self, alerts: list[Alert]) -> list[Alert]:
        self.raised += alerts
        if self.command is not None:
            for a in alerts:
                self.command.run(a)
        return alerts

    @staticmethod
    def title(alert: Alert) -> str:
        return "alert" if alert.state == "firing" else "alert resolved"

    @staticmethod
    def text(alert: Alert, mark: int | None = None) -> str:
        """The notification's text: the message, the hint for a drift, the chart mark."""
        parts = [alert.message]
        if alert.suggest == "new_segment" and alert.state == "firing":
            parts.append(NEW_SEGMENT_HINT)
        if mark is not None:
            parts.append(f"mark M{mark} on the charts")
        return " — ".join(parts)


def for_plan(plan: Any) -> AppAlerts | None:
    """The app's alerts for a :class:`tui.panes.launch.LaunchPlan` with ``alerting`` (rules keyed by
    source name) and ``alert_names`` (each pane's source name), or None without rules."""
    alerting = getattr(plan, "alerting", None)
    if alerting is None or not alerting.engine:
        return None
    engine: AlertEngine = alerting.engine
    labels = [p.label for p in plan.panes]
    names = getattr(plan, "alert_names", None) or labels
    per_source = {lab: engine.per_source.get(name, []) for lab, name in zip(labels, names)}
    mine = AlertEngine(engine.rules, per_source, rearm=engine.rearm)
    return AppAlerts(mine, labels, alerting.command) if mine else None


MAX_SHOWN = 5  # notifications per tick; the rest are counted in one line


def tick(screen: Any) -> list[Alert]:
    """One tick of the watch screen (``screen.alerts`` is an :class:`AppAlerts`): new records and
    the A/B verdict in, then for each alert a warning notification, and for a firing one a
    numbered mark on every chart and log tail (as the ``m`` key adds) and the terminal bell."""
    from tui.screens.messages import MarkAdded  # Textual: only when an app is running

    al: AppAlerts = screen.alerts
    synthetic = [{seg.index for seg in st.stats.synthetic()} for st in screen.states]
    raised = al.poll([st.history for st in screen.states], synthetic)
    if screen.plan.compare and len(screen.states) == 2:
        a, b = screen.states
        raised += al.verdict(a.label, b.label, screen.alert_verdict)
    firing = False
    for k, alert in enumerate(raised):
        mark = None
        if alert.state == "firing":
            firing = True
            screen.marks += 1
            mark = screen.marks
            text = f"alert: {alert.rule}"
            for st in screen.states:
                st.add_mark(mark, text)
            screen.post_message(MarkAdded(mark, text))
        if k < MAX_SHOWN:
            screen.app.notify(
                al.text(alert, mark),
                title=al.title(alert),
                severity="warning" if alert.state == "firing" else "information",
                timeout=10 if alert.state == "firing" else 5,
                markup=False,
            )
    if len(raised) > MAX_SHOWN:
        screen.app.notify(f"{len(raised) - MAX_SHOWN} more alerts in this moment", timeout=5, markup=False)
    if firing:
        screen.app.bell()
    return raised
