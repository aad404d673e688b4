"""One source's pane: header, numbers, sparklines, history chart, segment table, per-rank /
per-position breakdown and the raw log tail. It renders from a :class:`tui.panes.state.PaneState`
when the screen's tick asks it to, never per line, and only the parts that are due and changed:
numbers (with the verdict), sparklines (with the segment table), chart and log tail each have their own cadence
(:mod:`tui.screens.watch`). What it shows depends on its size (:func:`tui.widgets.layout.pane_tier`):
a compact pane keeps the facts that matter most, and the chart only where it has room for a
readable y axis."""

from __future__ import annotations

import time
from itertools import islice

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tui.panes.pane_numbers import pane_numbers, segment_verdict
from tui.panes.state import PaneState, RawLine
from tui.widgets.breakdown import Breakdown
from tui.widgets.config_line import config_line
from tui.widgets.history_chart import MIN_ROWS, PANE_MIN_ROWS, HistoryChart
from tui.widgets.layout import FULL_MIN_H, pane_tier
from tui.widgets.log_tail import LogTail
from tui.widgets.metric_spark import MetricSparks, SparkRow
from tui.widgets.numbers import NumbersPanel
from tui.widgets.pane_chart import CHART_POINTS, DEFAULT_WINDOW, WINDOWS, PaneChart
from tui.widgets.pane_header import PaneHeader
from tui.widgets.request_hist import RequestHist
from tui.widgets.segment_table import SegmentTable, verdict_line

__all__ = [
    "CHART_POINTS",
    "DEFAULT_WINDOW",
    "WINDOWS",
    "SourcePane",
    "config_line",
    "recent",
]  # the chart's, as before
SPARK_POINTS = 240
LOG_ROWS = 4  # the log tail's least height in a pane (its border and three lines)

Scales = dict[str, tuple[float, float]]
NUMBERS, SPARKS, CHART, LOG = "numbers", "sparks", "chart", "log"  # the parts a tick may render
ALL_PARTS = frozenset((NUMBERS, SPARKS, CHART, LOG))


def recent(state: PaneState, n: int):
    h = state.history
    return list(islice(h, max(0, len(h) - n), None))


class SourcePane(PaneChart, Vertical, can_focus=True):
    DEFAULT_CSS = """
    SourcePane {
        border: round $panel;
        height: 1fr;
        width: 1fr;
        padding: 0;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
    }
    SourcePane:focus-within, SourcePane:focus {
        border: round $primary;
    }
    SourcePane > #verdict {
        height: 1;
        padding: 0 1;
    }
    SourcePane.-no-chart HistoryChart { display: none; }
    SourcePane.-no-room HistoryChart { display: none; }
    SourcePane.-no-log LogTail { display: none; }
    SourcePane.-no-log.-no-chart #verdict { margin-bottom: 1; }
    SourcePane.-compact SegmentTable, SourcePane.-narrow SegmentTable { display: none; }
    SourcePane.-compact Breakdown, SourcePane.-narrow Breakdown { display: none; }
    SourcePane.-compact RequestHist, SourcePane.-narrow RequestHist { display: none; }
    SourcePane.-no-log-room LogTail { display: none; }
    SourcePane LogTail { min-height: 4; }
    SourcePane.-compact #verdict { margin-bottom: 0; }
    SourcePane > #config { display: none; height: 1; padding: 0 1; }
    """
    ALLOW_MAXIMIZE = True

    def __init__(
        self, index: int, state: PaneState, *, chart: bool = True, log: bool = True, **kwargs
    ) -> None:
        super().__init__(**kwargs)
        self.index = index
        self.state = state
        self.selected: int | None = None  # pinned segment index (None: follow the newest)
        self._version = -1  # the state's version at the last render of the numbers
        self.drawn_records = 0  # the records behind the numbers last drawn (benchmarks read it)
        self._table_version = -1  # ... of the segment table and breakdown
        self._spark_key: tuple | None = None
        self._chart_key: tuple | None = None
        self._scales: Scales = {}
        self._shown = False  # show_data has run once (the state is there to draw)
        self.tier = "full"
        self.window = DEFAULT_WINDOW  # index into WINDOWS: the chart's time window
        # the window's end when panned back ({): a log time (or a record number for the default
        # window and logs without timestamps); None: it ends at the newest record and follows
        self.pan_end: float | None = None
        self._verdict: str | None = None
        self.drawn_progress: float | None = None  # a replay's progress when its numbers were drawn
        self.set_class(not chart, "-no-chart")
        self.set_class(not log, "-no-log")

    def compose(self) -> ComposeResult:
        yield PaneHeader()
        yield NumbersPanel()
        yield Static("", id="config", markup=False)  # compare, short tiers: the config in one line
        yield MetricSparks(
            [
                SparkRow("accept len", "primary", 2),
                SparkRow("accept rate", "secondary", 2),
                SparkRow("tok/s", "accent", 0),
            ]
        )
        yield HistoryChart()
        yield SegmentTable()
        yield Static("", id="verdict")
        yield Breakdown()
        yield RequestHist()
        yield LogTail()

    # -- what the screen calls ---------------------------------------------------------------
    def show_status(
        self, *, frozen: bool = False, extra: str = "", now: float | None = None, peers: tuple[str, ...] = ()
    ) -> None:
        """``peers``: every pane's label (a long label is cut to what tells it from them)."""
        st = self.state
        self.query_one(PaneHeader).show(
            st.label,
            st.where,
            st.status_text(now or time.monotonic(), progress=self.drawn_progress),
            frozen=frozen,
            extra=extra,
            peers=peers,
            tag="AB"[self.index] if self.index < 2 and self.screen.has_class("-compare") else "",
        )

    def show_data(self, scales: Scales, *, force: bool = False, parts: frozenset[str] = ALL_PARTS) -> None:
        """Re-render the ``parts`` whose input (the state, the shared scales) changed."""
        st = self.state
        self._scales = dict(scales)
        self._shown = True
        stats = st.stats
        sel = self.selected
        if sel is not None and all(s.index != sel for s in stats.segments):
            sel = self.selected = None
        if NUMBERS in parts and (force or st.version != self._version):
            self._version = st.version
            self.drawn_records = stats.records
            if st.replay:  # the header's percentage is that of the numbers shown (read ahead: not yet)
                self.drawn_progress = st.read_progress()
            numbers = self.query_one(NumbersPanel)
            brief = numbers.has_class("-compact")  # a compact pane shows fewer numbers: only those
            numbers.show(pane_numbers(stats, sel, brief=brief), pinned=sel is not None)
            self._show_config(sel)
            verdict = self.query_one("#verdict", Static)
            measured = sum(1 for s in stats.segments if s.all.accept_len.n or s.all.pooled_len.n)
            line = verdict_line(segment_verdict(stats), max(1, verdict.size.width or 200), measured)
            if line.plain != self._verdict:
                self._verdict = line.plain
                verdict.update(line)
        if LOG in parts and self.log_shown:
            self.query_one(LogTail).sync(st.raw, st.raw_seq)  # nothing to do when no line came
        if SPARKS in parts and self.tier == "full" and (force or st.version != self._table_version):
            # the segment table and breakdown repeat the numbers per segment: at the sparklines' pace
            self._table_version = st.version
            seg = stats.current if sel is None else next(s for s in stats.segments if s.index == sel)
            self.query_one(SegmentTable).sync(stats, sel)
            self.query_one(Breakdown).show_segment(seg)
            panes = list(self.screen.query(SourcePane)) if self.screen.has_class("-compare") else [self]
            self.query_one(RequestHist).show(  # A and B in pane order: the same colours in both
                *(
                    (p.state.label, seg.requests if p is self else p.state.stats.current.requests)
                    for p in panes
                )
            )
        if SPARKS in parts:
            key = (
                st.seq,
                st.stats.current.index,
                scales.get("accept_len"),
                scales.get("accept_rate"),
                scales.get("throughput"),
            )
            if force or key != self._spark_key:
                self._spark_key = key
                pts = recent(st, SPARK_POINTS)
                cur = stats.current.all
                sparks = self.query_one(MetricSparks)
                for row, (attr, name, last) in enumerate(
                    (
                        (5, "accept_len", cur.accept_len.last),
                        (6, "accept_rate", cur.accept_rate.last),
                        (7, "throughput", cur.throughput.last),
                    )
                ):
                    lo, hi = scales.get(name, (0.0, 1.0))
                    sparks.set_data(row, [p[attr] for p in pts if p[attr] is not None], lo, hi, last)
        if CHART in parts:
            self.fit()
            if self.chart_shown:
                chart_key = self.chart_key(scales)
                if force or chart_key != self._chart_key:
                    self._chart_key = chart_key
                    self.query_one(HistoryChart).set_data(self.chart_data(scales.get("accept_len")))

    def _show_config(self, sel: int | None) -> None:
        """The config of the segment shown, in one line (compare mode, a pane too short for the
        numbers' own config row: what differs between A and B stays on the screen)."""
        line = self.query_one("#config", Static)
        stats = self.state.stats
        seg = stats.current if sel is None else next((s for s in stats.segments if s.index == sel), None)
        label = (seg.label or seg.config.label()) if seg is not None else ""
        known = bool(label) and label != "config unknown"
        show = known and self.tier != "full" and self.screen.has_class("-compare")
        line.display = show
        if show:
            text = config_line(
                f"seg {seg.index}: " if seg is not None else "", label, line.content_size.width or 80
            )
            if str(line.render()) != text:
                line.update(text)

    def chart_key(self, scales: Scales | None = None) -> tuple:
        """What the chart is drawn from: a new key, new chart data."""
        st = self.state
        scales = self._scales if scales is None else scales
        return (
            st.seq,
            tuple(st.boundaries)[-2:],
            len(st.marks),
            scales.get("accept_len"),
            self.window,
            self.pan_end,
        )

    @property
    def chart_current(self) -> bool:
        """The chart (when shown) was given the newest data (tests wait for this)."""
        return not self.chart_shown or self._chart_key == self.chart_key()

    @property
    def log_shown(self) -> bool:
        return not (self.has_class("-no-log") or self.has_class("-no-log-room"))

    @property
    def chart_shown(self) -> bool:
        return not (self.has_class("-no-chart") or self.has_class("-no-room"))

    # -- size ---------------------------------------------------------------------------------
    def on_resize(self) -> None:
        height = self.styles.height
        if height is not None and height.is_auto:  # as tall as its content (compare): by width only
            tier = pane_tier(self.size.width, FULL_MIN_H)
        else:
            tier = pane_tier(self.size.width, self.size.height)
        self._version = -1  # the numbers and the verdict line take the new width
        if tier != self.tier:
            self.tier = tier
            self.set_class(tier == "compact", "-compact")
            self.set_class(tier == "narrow", "-narrow")
            self.query_one(NumbersPanel).set_class(tier != "full", "-compact")
            self._version = self._table_version = -1  # blocks shown again must be brought up to date
        self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        if self._version == -1 and self._shown:  # a new width or tier: the numbers drawn for it now,
            # not at the next tick (an ended replay has no tick that changes anything)
            self.show_data(self._scales, parts=frozenset((NUMBERS, SPARKS)))
        was = self.chart_shown
        self.fit()
        if self.chart_shown and not was:
            self._chart_key = None
            self.show_data(self._scales, parts=frozenset((CHART,)))

    def fit(self) -> None:
        """Show the log tail (when it is on) where it gets ``LOG_ROWS`` rows — a compact pane too,
        so that the log tail and the overlay chart of compare mode show together — and the chart
        only when what is left gives it ``MIN_ROWS`` rows (``PANE_MIN_ROWS`` in compare)."""
        fixed = 0
        for child in self.children:
            if child.display and not isinstance(child, (HistoryChart, LogTail)):
                fixed += child.outer_size.height
        room = self.size.height - fixed
        log = not self.has_class("-no-log")
        log_room = room >= LOG_ROWS
        if self.has_class("-no-log-room") and log and log_room:
            self.query_one(LogTail).rebuild(self.state.raw, self.state.raw_seq)
        self.set_class(log and not log_room, "-no-log-room")
        # in compare the rows under the numbers are the chart's, however few (a short chart has no
        # frame); a grid's pane keeps to charts with a readable y axis (z shows it big)
        least = PANE_MIN_ROWS if self.screen.has_class("-compare") else MIN_ROWS
        self.set_class(room - (LOG_ROWS if log and log_room else 0) < least, "-no-room")
        self.hint_hidden()

    def hint_hidden(self) -> None:
        """On the bottom border, what this pane leaves out for lack of room and the key that shows
        it (``z: chart, segments``; ``no room: …`` when the pane has the screen already); nothing
        when it shows every block that is switched on."""
        hidden = []
        if self.has_class("-no-room") and not self.has_class("-no-chart"):
            hidden.append("chart")
        if self.tier != "full":
            hidden.append("segments")
        if self.has_class("-no-log-room") and not self.has_class("-no-log"):
            hidden.append("log")
        what = ", ".join(hidden)
        # z shows them when it gives this pane the screen; when it has the screen already, only a
        # taller terminal does. The screen's own list of its panes (composed once), not a DOM query
        # at every fit: in a grid of 32 panes the query took half of the app's time.
        panes = getattr(self.screen, "panes", None)
        alone = bool(hidden) and (
            self.screen.maximized is self
            or len(panes if panes is not None else self.screen.query(SourcePane)) == 1
        )
        hint = "" if not hidden else f"no room: {what}" if alone else f"z: {what}"
        if (self.border_subtitle or "") != hint:
            self.border_subtitle = hint

    def redraw_chart(self) -> None:
        """The chart drawn again now (a new window, a pan), when it is shown."""
        if self.chart_shown:
            self.show_data(self._scales, parts=frozenset((CHART,)))

    # -- toggles -----------------------------------------------------------------------------
    def set_chart(self, on: bool) -> None:
        self.set_class(not on, "-no-chart")
        if on:
            self._chart_key = None
            self.show_data(self._scales, parts=frozenset((CHART,)))

    def set_log(self, on: bool) -> None:
        self.set_class(not on, "-no-log")
        self.call_after_refresh(self.fit)
        if on:
            self.query_one(LogTail).rebuild(self.state.raw, self.state.raw_seq)

    def on_log_tail_filter_changed(self, event: LogTail.FilterChanged) -> None:
        event.stop()
        self.query_one(LogTail).rebuild(self.state.raw, self.state.raw_seq)
        if event.error:
            self.app.notify(f"log tail: {event.error}", severity="error", timeout=5, markup=False)
        else:
            self.app.notify(event.words, timeout=2, markup=False)
        self.focus()

    def on_log_tail_search_changed(self, event: LogTail.SearchChanged) -> None:
        event.stop()
        self.focus()
        if event.text and self.find(1) is None:
            self.app.notify(f"log tail: no line contains {event.text!r}", timeout=2, markup=False)

    def on_log_tail_goto_requested(self, event: LogTail.GotoRequested) -> None:
        event.stop()
        self.focus()
        line, words = self.query_one(LogTail).goto(self.state.raw, event.text)
        self.app.notify(
            f"log tail: {words}" + (" (End: follow)" if line is not None else ""),
            severity="information" if line is not None else "warning",
            timeout=3,
            markup=False,
        )

    def find(self, step: int) -> RawLine | None:
        """The next (older, ``step`` 1) or previous (newer, -1) line with the search text."""
        return self.query_one(LogTail).find(self.state.raw, self.state.raw_seq, step)

    def scroll_log(self, step: int) -> None:
        """Scroll the log tail back (``step`` > 0 lines) or forward; 0: follow the newest again."""
        tail = self.query_one(LogTail)
        if step:
            tail.scroll(self.state.raw, self.state.raw_seq, step)
        else:
            tail.rebuild(self.state.raw, self.state.raw_seq)

    def select_segment(self, step: int) -> int | None:
        """Pin the previous/next segment (live panes); past the newest: follow again."""
        segs = [s.index for s in self.state.stats.segments]
        cur = self.selected if self.selected is not None else segs[-1]
        pos = segs.index(cur) if cur in segs else len(segs) - 1
        pos = max(0, min(len(segs) - 1, pos + step))
        self.selected = None if pos == len(segs) - 1 else segs[pos]
        self.show_data(self._scales, force=True)
        return segs[pos]
