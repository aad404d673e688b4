"""What the watch screen's keys do (kept out of watch.py to keep each file short).

Each function is bound as an ``action_*`` method of :class:`tui.screens.watch.WatchScreen`.
"""

from __future__ import annotations

import csv
import time
from datetime import datetime
from typing import TYPE_CHECKING

from tui.core.model.records import format_ts
from tui.core.stats.rates import normalise_transform
from tui.screens.messages import MarkAdded, RecordsExported, RestartMarked
from tui.widgets.source_pane import CHART_POINTS, LOG, NUMBERS, WINDOWS

if TYPE_CHECKING:
    from tui.screens.watch import WatchScreen

# Replay speeds for + and -; None is "as fast as possible".
SPEEDS: list[float | None] = [0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, None]


def _speed_name(s: float | None) -> str:
    return "as fast as possible" if s is None else f"{s:g}×"


def pause(self: WatchScreen) -> None:
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


def _step_speed(self: WatchScreen, step: int) -> None:
    sources = self.replay_sources
    if not sources:
        self.app.notify("speed applies to replays (specwatch replay FILE…)", severity="warning", timeout=3)
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


def faster(self: WatchScreen) -> None:
    _step_speed(self, +1)


def slower(self: WatchScreen) -> None:
    _step_speed(self, -1)


def segment(self: WatchScreen, step: int) -> None:
    pane = self.focused_pane()
    src = pane.state.source
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


def restart_mark(self: WatchScreen) -> None:
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


def add_mark(self: WatchScreen) -> None:
    self.marks += 1
    text = datetime.now().strftime("%H:%M:%S")
    for st in self.states:
        st.add_mark(self.marks, text)
    self.post_message(MarkAdded(self.marks, text))
    self.app.notify(f"mark M{self.marks} at {text} (on the charts and in the log tails)", timeout=2)
    self.tick(lambda i: frozenset({NUMBERS, LOG}))  # the mark in the log tails now, not at the next tick


def toggle_chart(self: WatchScreen) -> None:
    self.charts = not self.charts
    for pane in self.panes:
        pane.set_chart(self.charts)
    self.update_layout()


def chart_window(self: WatchScreen, step: int) -> None:
    """Widen (``<``, step 1) or narrow (``>``, step -1) every pane's chart time window."""
    panes = self.panes
    index = max(0, min(len(WINDOWS) - 1, panes[0].window + step))
    for pane in panes:
        pane.set_window(index)
    window = WINDOWS[index]
    name = window[0] if window is not None else f"the last {CHART_POINTS:,} records (the default)"
    self.app.notify(f"charts: {name}  (< wider · > narrower)", timeout=2, markup=False)


def toggle_overlay(self: WatchScreen) -> None:
    boxes = list(self.query("#overlay-box"))
    if not boxes:
        self.app.notify("the overlay chart is part of compare mode", severity="warning", timeout=2)
        return
    self.overlay = not self.overlay
    for box in boxes:
        box.display = self.overlay
    self._cmp_version = ()
    self._overlay_key = ()
    self.tick()


def toggle_log(self: WatchScreen) -> None:
    self.logs = not self.logs
    for pane in self.panes:
        pane.set_log(self.logs)
    self.update_layout()


def open_filter(self: WatchScreen) -> None:
    from tui.widgets.log_tail import LogTail

    pane = self.focused_pane()
    if pane.has_class("-no-log"):
        self.logs = True
        for p in self.panes:
            p.set_log(True)
        self.update_layout()
    pane.query_one(LogTail).open_filter()


def _log_pane(self: WatchScreen):
    """The focused pane, its log tail switched on (every pane's, as `l` does)."""
    pane = self.focused_pane()
    if pane.has_class("-no-log"):
        self.logs = True
        for p in self.panes:
            p.set_log(True)
        self.update_layout()
    return pane


def open_search(self: WatchScreen) -> None:
    from tui.widgets.log_tail import LogTail

    _log_pane(self).query_one(LogTail).open_search()


def find_next(self: WatchScreen, step: int) -> None:
    """F3: the next older line with the search text; shift+F3: the next newer one."""
    from tui.widgets.log_tail import LogTail

    pane = self.focused_pane()
    tail = pane.query_one(LogTail)
    if not tail.search:
        self.app.notify("ctrl+f first: the text to find in the log tail", timeout=2)
    elif pane.find(step) is None:
        self.app.notify(
            f"no {'older' if step > 0 else 'newer'} line contains {tail.search!r}", timeout=2, markup=False
        )


def scroll_log(self: WatchScreen, step: int) -> None:
    """PageUp / PageDown: the focused pane's log tail a page back / forward; End: follow."""
    from tui.widgets.log_tail import LogTail, TailView

    pane = _log_pane(self)
    page = max(1, pane.query_one(LogTail).query_one(TailView).size.height - 1)
    pane.scroll_log(step * page)


def toggle_wrap(self: WatchScreen) -> None:
    """w: long log lines wrapped (up to 6 rows each) or cut at the width, in every pane."""
    from tui.widgets.log_tail import LogTail

    self.wrap = not self.wrap
    for tail in self.query(LogTail):
        tail.set_wrap(self.wrap)
    self.app.notify("log tail: long lines wrapped" if self.wrap else "log tail: one row per line", timeout=2)


def zoom(self: WatchScreen) -> None:
    """Maximise the focused pane (every block, the chart with room for its axis), or restore."""
    if self.maximized is not None:
        self.minimize()
        self.app.notify("every pane again (z maximises the focused one)", timeout=2)
    else:
        pane = self.focused_pane()
        self.maximize(pane, container=False)
        self.app.notify(f"{pane.state.label} maximised (z restores)", timeout=2, markup=False)
    self.call_after_refresh(self.tick)


def focus_pane(self: WatchScreen, step: int) -> None:
    panes = self.panes
    cur = self.focused_pane()
    panes[(panes.index(cur) + step) % len(panes)].focus()


CSV_FIELDS = [
    "source",
    "where",
    "segment",
    "config",
    "record",
    "line_no",
    "timestamp",
    "rank",
    "accept_len",
    "accept_rate",
    "accept_rate_normalised",
    "throughput",
    "running_req",
]


def export_csv(self: WatchScreen) -> None:
    """The records kept for the charts (the newest ones of each pane) as one CSV file."""
    for st in self.states:  # with the lines held since the last tick
        st.flush()
    directory = self.app.save_dir  # type: ignore[attr-defined]
    path = directory / f"specwatch-records-{time.strftime('%Y%m%d-%H%M%S')}.csv"
    rows = 0
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(CSV_FIELDS)
            for st in self.states:
                transforms: dict[int, tuple] = {}
                for p in list(st.history):
                    if p.segment not in transforms:
                        seg = st.segment(p.segment)
                        tr = normalise_transform(seg.rate_definition().drafts_per_step) if seg else None
                        transforms[p.segment] = (tr, (seg.label or seg.config.label()) if seg else "")
                    tr, config = transforms[p.segment]
                    norm = "" if tr is None or p.accept_len is None else f"{tr[0] + tr[1] * p.accept_len:.6g}"
                    w.writerow(
                        [
                            st.label,
                            st.where,
                            p.segment,
                            config,
                            p.seq,
                            p.line_no,
                            format_ts(p.timestamp) or "",
                            p.rank or "",
                            _v(p.accept_len),
                            _v(p.accept_rate),
                            norm,
                            _v(p.throughput),
                            _v(p.running_req),
                        ]
                    )
                    rows += 1
    except OSError as exc:
        self.app.notify(
            f"cannot write {path}: {exc.strerror or exc}", severity="error", timeout=6, markup=False
        )
        return
    self.post_message(RecordsExported(str(path), rows))
    self.app.notify(f"{rows} records written to {path}", title="CSV export", timeout=6, markup=False)


def _v(x) -> str:
    return "" if x is None else f"{x:g}" if isinstance(x, float) else str(x)
