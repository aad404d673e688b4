"""What the watch screen's keys do: :class:`WatchActions`, the ``action_*`` methods that
:mod:`tui.screens.keys` binds (key, footer, palette and help text are there).

They act on what the screens below provide — the panes and their models, ``frozen`` and
``marks`` and the tick (:class:`~tui.screens.ticking.TickingScreen`), the compare bar and overlay
(:class:`~tui.screens.compare_view.CompareScreen`) — and on the view switches this class owns:
``charts``, ``logs`` and ``wrap``. :class:`~tui.screens.watch.WatchScreen` composes the widgets.
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

from tui.panes.launch import LaunchPlan
from tui.screens.compare_view import CompareScreen
from tui.screens.messages import MarkAdded, RecordsExported, RestartMarked
from tui.screens.records_csv import write_records
from tui.widgets.source_pane import CHART, CHART_POINTS, LOG, NUMBERS, WINDOWS, SourcePane

# Replay speeds for + and -; None is "as fast as possible".
SPEEDS: list[float | None] = [0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, None]


def _speed_name(s: float | None) -> str:
    return "as fast as possible" if s is None else f"{s:g}×"


class WatchActions(CompareScreen):
    def __init__(self, plan: LaunchPlan) -> None:
        super().__init__(plan)
        self.charts = not plan.compare  # the history charts shown (c)
        self.logs = len(plan.panes) <= 2 and not plan.compare  # the log tails shown (l)
        self.wrap = False  # log tails: long lines wrapped (w) or cut at the width
        self._charts_for_overlay = False  # the panes' charts were switched on by o (the overlay hidden)

    def update_layout(self) -> None:
        """Compare mode: panes as tall as their content unless charts or logs are shown in them."""
        self.set_class(self.charts or self.logs, "-tall-panes")
        self.call_after_refresh(self.fit_compare)

    @property
    def replay_sources(self) -> list:
        return [st.source for st in self.states if st.replay and st.source is not None]

    def action_pause(self) -> None:
        sources = self.replay_sources
        if sources:
            playing = any(not getattr(s, "paused", False) for s in sources)
            for s in sources:
                s.pause() if playing else s.resume()
            self.app.notify("replay paused (space resumes)" if playing else "replay resumed", timeout=2)
        else:
            self.frozen = not self.frozen
            self.app.notify(
                "view frozen: sources are still read (space thaws)" if self.frozen else "view live again",
                timeout=2,
            )
        self.tick()

    def _step_speed(self, step: int) -> None:
        sources = self.replay_sources
        if not sources:
            self.app.notify(
                "speed applies to replays (specwatch replay FILE…)", severity="warning", timeout=3
            )
            return
        cur = sources[0].speed
        if cur in SPEEDS:
            i = SPEEDS.index(cur)
        else:  # a speed given on the command line: the nearest step on the side we move to
            finite = [k for k, s in enumerate(SPEEDS) if s is not None and (s < cur if step > 0 else s > cur)]
            i = (max(finite) if step > 0 else min(finite)) if finite else (len(SPEEDS) - 2 if step > 0 else 0)
        new = SPEEDS[max(0, min(len(SPEEDS) - 1, i + step))]
        for s in sources:
            s.set_speed(new)
        self.app.notify(f"replay speed {_speed_name(new)}", timeout=2)
        self.tick()

    def action_faster(self) -> None:
        self._step_speed(+1)

    def action_slower(self) -> None:
        self._step_speed(-1)

    def action_segment(self, step: int) -> None:
        pane = self.focused_pane()
        src = pane.state.source
        if pane.state.replay and src is not None and getattr(src, "finished", False):
            # an ended replay is browsed: the segments of what was read, nothing read again
            shown = pane.select_segment(step)
            self.app.notify(
                f"{pane.state.label}: showing segment {shown} of the replay read"
                + (" (the newest)" if pane.selected is None else ""),
                timeout=2,
                markup=False,
            )
            return
        if pane.state.replay and src is not None and hasattr(src, "next_segment"):
            (src.next_segment if step > 0 else src.prev_segment)()
            self.app.notify(
                f"{pane.state.label}: replay jumps to the {'next' if step > 0 else 'previous'} segment",
                timeout=2,
                markup=False,
            )
            return
        shown = pane.select_segment(step)
        follow = pane.selected is None
        self.app.notify(
            f"{pane.state.label}: showing segment {shown}" + (" (the newest: following)" if follow else ""),
            timeout=2,
            markup=False,
        )

    def action_restart_mark(self) -> None:
        pane = self.focused_pane()
        st = pane.state
        before = st.stats.current.index
        st.mark_restart()
        seg = st.stats.current.index
        self.post_message(RestartMarked(pane.index, seg))
        if seg == before:
            self.app.notify(
                f"{st.label}: the current segment {seg} has no records yet; it now starts at your mark",
                timeout=3,
                markup=False,
            )
        pane.show_data(self.scales(), force=True)

    def action_add_mark(self) -> None:
        self.marks += 1
        stamps = [t for t in (st.log_time() for st in self.states if st.replay) if t is not None]
        if stamps:  # a replay: the log's time (the newest record's), not the wall clock
            text = time.strftime("%H:%M:%S", time.gmtime(max(stamps))) + " by the log's clock"
        else:
            text = datetime.now().strftime("%H:%M:%S")
        for st in self.states:
            st.add_mark(self.marks, text)
        self.post_message(MarkAdded(self.marks, text))
        self.app.notify(f"mark M{self.marks} at {text} (on the charts and in the log tails)", timeout=2)
        self.tick(lambda i: frozenset({NUMBERS, LOG}))  # the mark in the log tails now, not at the next tick

    def action_toggle_chart(self) -> None:
        self.charts = not self.charts
        self._charts_for_overlay = False
        for pane in self.panes:
            pane.set_chart(self.charts)
        self.update_layout()

    def action_chart_window(self, step: int) -> None:
        """Widen (``<``, step 1) or narrow (``>``, step -1) every pane's chart time window."""
        panes = self.panes
        index = max(0, min(len(WINDOWS) - 1, panes[0].window + step))
        for pane in panes:
            pane.set_window(index)
        window = WINDOWS[index]
        name = window[0] if window is not None else f"the last {CHART_POINTS:,} records (the default)"
        self.app.notify(f"charts: {name}  (< wider · > narrower)", timeout=2, markup=False)

    def action_chart_pan(self, step: int) -> None:
        """Pan every pane's chart window back (``{``, step 1) or forward (``}``, step -1) in time."""
        panes = self.panes
        words = [pane.pan(step) for pane in panes]
        self.redraw_compare()  # the overlay shows the panes' windows
        self.tick(lambda i: frozenset({CHART}))
        shown = words[self.panes.index(self.focused_pane())] if panes else ""
        self.app.notify(f"charts: {shown}  ({{ earlier · }} later)", timeout=2, markup=False)

    def action_toggle_overlay(self) -> None:
        boxes = list(self.query("#overlay-box"))
        if not boxes:
            self.app.notify("the overlay chart is part of compare mode", severity="warning", timeout=2)
            return
        self.overlay = not self.overlay
        for box in boxes:
            box.display = self.overlay
        # the rows go to the panes: each shows its own chart while the overlay is hidden
        if not self.overlay and not self.charts:
            self._charts_for_overlay = self.charts = True
        elif self.overlay and self._charts_for_overlay:
            self._charts_for_overlay = self.charts = False
        for pane in self.panes:
            if pane.has_class("-no-chart") == self.charts:
                pane.set_chart(self.charts)
        self.update_layout()
        self.redraw_compare()
        self.tick()

    def action_toggle_log(self) -> None:
        self.logs = not self.logs
        for pane in self.panes:
            pane.set_log(self.logs)
        self.update_layout()
        if self.logs:  # once the panes have their new heights: say where there was no room
            self.call_after_refresh(lambda: self.call_after_refresh(self._say_log_room))
        else:
            self.app.notify("log tails hidden (l shows them)", timeout=2)

    def _say_log_room(self) -> None:
        for pane in self.panes:
            pane.fit()
        hidden = [p for p in self.panes if not p.log_shown]
        if not hidden:
            self.app.notify("log tails shown (l hides them)", timeout=2)
        else:
            what = "the log tail" if len(hidden) == 1 else f"{len(hidden)} panes' log tails"
            self.app.notify(
                f"no room for {what} at this size: z maximises the focused pane"
                + (", o hides the overlay chart" if self.overlay else ""),
                severity="warning",
                timeout=4,
            )

    def action_filter(self) -> None:
        from tui.widgets.log_tail import LogTail

        self._log_pane().query_one(LogTail).open_filter()

    def _log_pane(self) -> SourcePane:
        """The focused pane, its log tail switched on (every pane's, as `l` does)."""
        pane = self.focused_pane()
        if pane.has_class("-no-log"):
            self.logs = True
            for p in self.panes:
                p.set_log(True)
            self.update_layout()
        return pane

    def action_find(self) -> None:
        from tui.widgets.log_tail import LogTail

        self._log_pane().query_one(LogTail).open_search()

    def action_goto(self) -> None:
        """g: a line or a time in the log tail; when the chart is panned, the line of its window's
        newest record is offered (Enter goes there: the log tail follows the window)."""
        from tui.widgets.log_tail import LogTail

        pane = self._log_pane()
        line = pane.window_end_line()
        pane.query_one(LogTail).open_goto("" if line is None else str(line))

    def action_find_next(self, step: int) -> None:
        """F3: the next older line with the search text; F4 (or shift+F3): the next newer one."""
        from tui.widgets.log_tail import LogTail

        pane = self.focused_pane()
        tail = pane.query_one(LogTail)
        if not tail.search:
            self.app.notify("ctrl+f first: the text to find in the log tail", timeout=2)
        elif pane.find(step) is None:
            self.app.notify(
                f"no {'older' if step > 0 else 'newer'} line contains {tail.search!r}",
                timeout=2,
                markup=False,
            )

    def action_scroll_log(self, step: int) -> None:
        """PageUp / PageDown: the focused pane's log tail a page back / forward; End: follow."""
        from tui.widgets.log_tail import LogTail, TailView

        pane = self._log_pane()
        page = max(1, pane.query_one(LogTail).query_one(TailView).size.height - 1)
        pane.scroll_log(step * page)

    def action_toggle_wrap(self) -> None:
        """w: long log lines wrapped (up to 6 rows each) or cut at the width, in every pane."""
        from tui.widgets.log_tail import LogTail

        self.wrap = not self.wrap
        for tail in self.query(LogTail):
            tail.set_wrap(self.wrap)
        self.app.notify(
            "log tail: long lines wrapped" if self.wrap else "log tail: one row per line", timeout=2
        )

    def action_zoom(self) -> None:
        """Maximise the focused pane (every block, the chart with room for its axis), or restore."""
        if self.maximized is not None:
            was = self.maximized
            self.minimize()
            if isinstance(was, SourcePane):
                was.set_chart(self.charts)
            self.app.notify("every pane again (z maximises the focused one)", timeout=2)
        else:
            pane = self.focused_pane()
            self.maximize(pane, container=False)
            pane.set_chart(
                True
            )  # the screen is the pane's: its chart too (compare mode has none in the panes)
            self.app.notify(f"{pane.state.label} maximised (z restores)", timeout=2, markup=False)
        self.call_after_refresh(self.tick)

    def action_focus_pane(self, step: int) -> None:
        panes = self.panes
        cur = self.focused_pane()
        panes[(panes.index(cur) + step) % len(panes)].focus()

    def action_export(self) -> None:
        """The records kept for the charts (the newest ones of each pane) as one CSV file in the
        app's save directory."""
        for st in self.states:  # with the lines held since the last tick
            st.flush()
        directory = Path(getattr(self.app, "save_dir", Path.cwd()))
        path = directory / f"specwatch-records-{time.strftime('%Y%m%d-%H%M%S')}.csv"
        try:
            rows = write_records(path, self.states)
        except OSError as exc:
            self.app.notify(
                f"cannot write {path}: {exc.strerror or exc}", severity="error", timeout=6, markup=False
            )
            return
        self.post_message(RecordsExported(str(path), rows))
        self.app.notify(f"{rows} records written to {path}", title="CSV export", timeout=6, markup=False)
