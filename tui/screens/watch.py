"""The main screen: one pane per source (side by side, a grid for more than two), and in compare
mode a B − A bar and an overlay chart. Sources run as async workers that feed the pane models;
a steady tick renders from the models a few times a second, whatever the line rate."""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from dataclasses import replace

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Grid, Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header

from tui import alerting
from tui.core.sanitize import visible
from tui.core.sources.base import LineBatch
from tui.core.summary import comparison
from tui.launch import LaunchPlan
from tui.messages import SegmentStarted, SourceFinished, SourceStatusChanged
from tui.pane_state import PaneState
from tui.screens import actions
from tui.widgets.compare_bar import CompareBar
from tui.widgets.history_chart import ChartData, ChartSeries, HistoryChart
from tui.widgets.source_pane import CHART_POINTS, SPARK_POINTS, SourcePane, recent

TICK = 0.25  # seconds between renders: 4 Hz however fast lines arrive
SLICE = 100  # lines parsed between two yields to the event loop (keys stay responsive)
BURST = 0.020  # seconds of parsing after which a source rests briefly, so the UI's messages flow
MAX_NOTICES_PER_TICK = 3


def nice_ceil(x: float) -> float:
    if x <= 0:
        return 1.0
    if not math.isfinite(x):
        return 1.0  # no scale fits it (the caller leaves such values out)
    mag = 10.0 ** math.floor(math.log10(x))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * mag >= x:
            return m * mag if math.isfinite(m * mag) else x
    return x


def _range(xs: list[float], step: float, empty: tuple[float, float]) -> tuple[float, float]:
    """The scale of a chart: [min, max] rounded out to ``step``; values that fit no scale (inf,
    nan) are left out, and huge ones (1e308) give a plain [min, max]."""
    xs = [x for x in xs if math.isfinite(x)]
    if not xs:
        return empty
    lo, hi = min(xs), max(xs)
    if max(abs(lo), abs(hi)) / step < 1e12:
        lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
        return (round(lo, 6), round(hi if hi > lo else lo + step, 6))
    return (lo, hi) if hi > lo else (lo, lo + abs(lo) * 1e-6)


class WatchScreen(Screen):
    BINDINGS = [
        Binding("space", "pause", "Pause"),
        Binding("plus,equals_sign", "faster", "Faster", key_display="+"),
        Binding("minus", "slower", "Slower", key_display="-"),
        Binding("left_square_bracket", "segment(-1)", "Prev seg", key_display="["),
        Binding("right_square_bracket", "segment(1)", "Next seg", key_display="]"),
        Binding("n", "restart_mark", "Restarted"),
        Binding("m", "add_mark", "Mark"),
        Binding("c", "toggle_chart", "Chart"),
        Binding("o", "toggle_overlay", "Overlay", show=False),
        Binding("l", "toggle_log", "Log"),
        Binding("slash", "filter", "Filter", key_display="/"),
        Binding("e", "export", "CSV"),
        Binding("tab", "focus_pane(1)", "Next pane", show=False, priority=False),
        Binding("shift+tab", "focus_pane(-1)", "Prev pane", show=False),
    ]

    def __init__(self, plan: LaunchPlan) -> None:
        super().__init__()
        self.plan = plan
        self.states = [PaneState(p.label, p.where, replay=p.replay) for p in plan.panes]
        self.frozen = False
        self.charts = not plan.compare
        self.overlay = plan.compare and len(plan.panes) == 2
        self.logs = len(plan.panes) <= 2 and not plan.compare
        self.marks = 0
        self.ticks = 0
        self.render_seconds = 0.0
        self.tick_log: deque[tuple[float, float]] = deque(
            maxlen=2000
        )  # (start, duration): the bench reads it
        self._seg_seen = [0] * len(self.states)
        self._cmp_version: tuple = ()
        self.alerts = alerting.for_plan(plan)  # alert rules (tui.alerting), or None
        self.alert_verdict: str | None = None  # compare: the newest B − A verdict on accept len

    # -- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        panes = [
            SourcePane(i, st, chart=self.charts, log=self.logs, id=f"pane-{i}")
            for i, st in enumerate(self.states)
        ]
        with Vertical(id="body"):
            if self.plan.compare and len(panes) == 2:
                yield CompareBar(id="compare")
            box = Grid(*panes, id="panes") if len(panes) > 2 else Horizontal(*panes, id="panes")
            yield box
            if self.plan.compare and len(panes) == 2:
                with Container(id="overlay-box"):
                    yield HistoryChart(id="overlay")
        yield Footer()

    def on_mount(self) -> None:
        self.title = visible(self.plan.title)  # names of files and hosts: shown, never obeyed
        self.sub_title = visible(self._subtitle())
        grid = self.query_one("#panes")
        if isinstance(grid, Grid):
            cols = 2 if len(self.states) <= 4 else 3
            grid.styles.grid_size_columns = cols
        for box in self.query("#overlay-box"):
            box.display = self.overlay
        self.set_class(self.plan.compare and len(self.states) == 2, "-compare")
        self.update_layout()
        for i in range(len(self.states)):
            self.run_worker(self._run_source(i), group="sources", name=f"source-{i}", exit_on_error=False)
        self.set_interval(TICK, self.tick)
        self.panes[0].focus()
        self.call_after_refresh(self.tick)

    def update_layout(self) -> None:
        """Compare mode: panes as tall as their content unless charts or logs are shown in them."""
        self.set_class(self.charts or self.logs, "-tall-panes")

    def _subtitle(self) -> str:
        n = len(self.states)
        kind = "replay" if all(s.replay for s in self.states) else "watch"
        return f"{kind} · {n} source{'s' if n != 1 else ''}" + (" · compare" if self.plan.compare else "")

    @property
    def panes(self) -> list[SourcePane]:
        return list(self.query(SourcePane))

    # -- sources -----------------------------------------------------------------------------
    async def _run_source(self, i: int) -> None:
        spec, state = self.plan.panes[i], self.states[i]
        try:
            src = spec.open()
        except Exception as exc:  # a source that cannot even be opened: say so in its pane
            state.on_finished(str(exc) or type(exc).__name__)
            self.post_message(SourceFinished(i, state.error))
            return
        state.source = src
        burst = time.perf_counter()

        async def rest() -> None:
            nonlocal burst
            if time.perf_counter() - burst > BURST:
                await asyncio.sleep(0.004)  # a real pause: key presses and renders get through
                burst = time.perf_counter()
            else:
                await asyncio.sleep(0)

        try:
            async for batch in src:
                if isinstance(batch, LineBatch):
                    if len(batch.lines) <= SLICE:
                        state.feed_lines(batch)
                    else:
                        for k in range(0, len(batch.lines), SLICE):
                            state.feed_lines(
                                replace(
                                    batch,
                                    lines=batch.lines[k : k + SLICE],
                                    offsets=batch.offsets[k : k + SLICE],
                                    first_line_no=batch.first_line_no + k,
                                )
                            )
                            await rest()
                else:
                    state.on_event(batch)
                    self.post_message(SourceStatusChanged(i, state.status, batch.message))
                await rest()
            state.on_finished(getattr(src, "error", None))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a source must not take the app down
            state.on_finished(f"{type(exc).__name__}: {exc}")
        finally:
            try:
                await src.aclose()
            except Exception:
                pass
        self.post_message(SourceFinished(i, state.error))

    # -- the tick ----------------------------------------------------------------------------
    def tick(self) -> None:
        t0 = time.perf_counter()
        self.ticks += 1
        now = time.monotonic()
        panes = self.panes
        for pane in panes:
            pane.show_status(frozen=self.frozen, now=now, extra=self._pane_extra(pane))
        if not self.frozen:
            scales = self.scales()
            for pane in panes:
                pane.show_data(scales)
            self._show_compare(scales)
        self._drain_notices()
        if self.alerts is not None:
            alerting.tick(self)
        took = time.perf_counter() - t0
        self.render_seconds += took
        self.tick_log.append((t0, took))

    def _pane_extra(self, pane: SourcePane) -> str:
        st = pane.state
        return f"{st.lines:,} lines · {st.stats.records:,} records"

    def scales(self) -> dict[str, tuple[float, float]]:
        """Shared y-scales: panes side by side are drawn on the same axis (the data's range,
        rounded out, over every pane)."""
        al, ar, tp_hi = [], [], 1.0
        for st in self.states:
            pts = recent(st, max(CHART_POINTS, SPARK_POINTS))
            al += [p.accept_len for p in pts if p.accept_len is not None and math.isfinite(p.accept_len)]
            ar += [p.accept_rate for p in pts if p.accept_rate is not None and math.isfinite(p.accept_rate)]
            tp_hi = max(
                [tp_hi]
                + [p.throughput for p in pts if p.throughput is not None and math.isfinite(p.throughput)]
            )
        return {
            "accept_len": _range(al, 0.25, (1.0, 2.0)),
            "accept_rate": _range(ar, 0.05, (0.0, 1.0)),
            "throughput": (0.0, nice_ceil(tp_hi)),
        }

    def _show_compare(self, scales) -> None:
        if not (self.plan.compare and len(self.states) == 2):
            return
        a, b = self.states
        key = (a.version, b.version, self.overlay, scales.get("accept_len"))
        if key == self._cmp_version:
            return
        self._cmp_version = key
        cmp = comparison(a.stats, b.stats)
        self.alert_verdict = cmp["accept_len"]["verdict"]
        self.query_one(CompareBar).show(cmp, a.label, b.label)
        if self.overlay:
            self.query_one("#overlay", HistoryChart).set_data(self.overlay_data(scales.get("accept_len")))

    def overlay_data(self, ylim) -> ChartData:
        pts = [[p for p in recent(st, CHART_POINTS) if p.accept_len is not None] for st in self.states]
        timed = all(ps and all(p.timestamp is not None for p in ps) for ps in pts)
        firsts = [st.history[0].timestamp if st.history else None for st in self.states]
        series, bounds = [], []
        for st, ps, first, colour in zip(self.states, pts, firsts, ("primary", "secondary")):
            if timed and first is not None:
                xs = [(p.timestamp - first) / 60.0 for p in ps]
            else:
                xs = [float(p.seq) for p in ps]
            series.append(ChartSeries(st.label, xs, [p.accept_len for p in ps], colour))
            by_seq = {p.seq: x for p, x in zip(ps, xs)}
            for seq, idx in st.boundaries:
                if seq in by_seq and idx > 0:
                    bounds.append((by_seq[seq], f"{st.label} seg {idx}", colour))
        xlabel = "minutes since each source's first record" if timed else "record #"
        return ChartData(series, bounds, [], ylim, xlabel=f"accept len, both sources — x: {xlabel}")

    def _drain_notices(self) -> None:
        shown = 0
        dropped = 0
        for i, st in enumerate(self.states):
            st.check()
            cur = st.stats.current.index
            if cur != self._seg_seen[i]:
                self._seg_seen[i] = cur
                seg = st.stats.current
                self.post_message(SegmentStarted(i, cur, seg.reason, seg.label or seg.config.label()))
            for n in st.take_notices():
                if shown < MAX_NOTICES_PER_TICK:
                    self.app.notify(
                        n.message,
                        title=n.title,
                        severity=n.severity,  # type: ignore[arg-type]
                        timeout=8 if n.severity == "error" else 5,
                        markup=False,
                    )
                    shown += 1
                else:
                    dropped += 1
        if dropped:
            self.app.notify(
                f"{dropped} more notifications in this moment were skipped", timeout=3, markup=False
            )

    def on_source_status_changed(self, message: SourceStatusChanged) -> None:
        if 0 <= message.pane < len(self.states):
            self.panes[message.pane].show_status(
                frozen=self.frozen, extra=self._pane_extra(self.panes[message.pane])
            )

    # -- actions (see tui.screens.actions) ---------------------------------------------------
    action_pause = actions.pause
    action_faster = actions.faster
    action_slower = actions.slower
    action_segment = actions.segment
    action_restart_mark = actions.restart_mark
    action_add_mark = actions.add_mark
    action_toggle_chart = actions.toggle_chart
    action_toggle_overlay = actions.toggle_overlay
    action_toggle_log = actions.toggle_log
    action_filter = actions.open_filter
    action_export = actions.export_csv
    action_focus_pane = actions.focus_pane

    def focused_pane(self) -> SourcePane:
        node = self.focused
        while node is not None and not isinstance(node, SourcePane):
            node = node.parent  # type: ignore[assignment]
        return node if isinstance(node, SourcePane) else self.panes[0]

    @property
    def replay_sources(self) -> list:
        return [st.source for st in self.states if st.replay and st.source is not None]
