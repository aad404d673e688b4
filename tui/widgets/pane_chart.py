"""What a source pane's history chart draws (:class:`PaneChart`, a part of
:class:`tui.widgets.source_pane.SourcePane`): its time window (``<`` / ``>``: :data:`WINDOWS`),
where the window was panned to (``{`` / ``}``: back and forth in time by half its width, staying
put while lines come), and the chart's data — the records in the window, cut into runs at
restarts, segment boundaries labelled by config, marks, and the x label that says where the
window is and which keys move it."""

from __future__ import annotations

import math
import time
from bisect import bisect_left

from tui.panes.state import HISTORY, PaneState
from tui.widgets.chart_axis import cut
from tui.widgets.history_chart import ChartData, ChartSeries

CHART_POINTS = 1500  # records drawn in the history chart (more to reach back to the previous segment)
# the chart's time windows, narrowest first (`>` narrows, `<` widens): (name, seconds of the log's
# own clock, records when the log has no timestamps); None: the default view, then every record kept
WINDOWS: tuple[tuple[str, float, int] | None, ...] = (
    ("last minute", 60.0, 100),
    ("last 5 min", 300.0, 300),
    ("last 15 min", 900.0, 1000),
    ("last hour", 3600.0, 3000),
    None,
    ("everything", math.inf, HISTORY),
)
DEFAULT_WINDOW = WINDOWS.index(None)


def _clock(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(ts))  # naive seconds: the log's own fields


def _first_seq(pts: list) -> str:
    return f"{pts[0].seq:,}" if pts else "–"


class PaneChart:
    """The chart's window and data; the pane provides ``state``, ``chart_shown`` and
    :meth:`redraw_chart`."""

    state: PaneState
    window: int  # index into WINDOWS
    # the window's end when panned back ({): a log time (or a record number for the default
    # window and logs without timestamps); None: it ends at the newest record and follows
    pan_end: float | None

    def redraw_chart(self) -> None:
        raise NotImplementedError

    def _window(self) -> tuple[str, float | None, int]:
        """The chart's window: (its name, seconds of the log's clock or None for a window of
        records, records)."""
        window = WINDOWS[self.window]
        if window is None:
            return "", None, CHART_POINTS
        name, seconds, records = window
        return name, seconds, records

    def _by_time(self, pts: list) -> bool:
        name, seconds, _ = self._window()
        return seconds is not None and any(p.timestamp is not None for p in pts)

    def chart_points(self) -> tuple[list, str]:
        """The records the chart draws (its time window, where it was panned to) and the words
        for it."""
        st = self.state
        name, seconds, records = self._window()
        pts = [p for p in st.history if p.accept_len is not None]
        if seconds is not None and math.isinf(seconds):
            self.pan_end = None  # everything kept: nothing to pan
            return pts, f"everything kept ({len(pts):,} records)"
        if self._by_time(pts):
            assert seconds is not None
            newest = max(p.timestamp for p in pts if p.timestamp is not None)
            end = newest if self.pan_end is None else min(self.pan_end, newest)
            pts = [p for p in pts if p.timestamp is not None and end - seconds <= p.timestamp <= end]
            if self.pan_end is None:
                return pts, f"{name} by the log's clock ({len(pts):,} records)"
            return (
                pts,
                f"{_clock(end - seconds)}–{_clock(end)} by the log's clock, panned ({len(pts):,} records)",
            )
        if seconds is None:  # the default: the last CHART_POINTS records, back to the previous segment
            n = records
            if st.boundaries and self.pan_end is None:  # reach back to the previous segment: the step shows
                prev = st.boundaries[-2][0] if len(st.boundaries) >= 2 else 1
                n = max(n, st.seq - prev + 1)
        else:
            n = records  # no timestamps in this log: a window of records instead
        end_seq = st.seq if self.pan_end is None else min(self.pan_end, st.seq)
        pts = [p for p in pts if end_seq - n < p.seq <= end_seq]
        what = (
            f"last {len(pts):,} records"
            if self.pan_end is None
            else f"records {_first_seq(pts)}–{int(end_seq):,}, panned"
        )
        if seconds is not None:
            what += f" (no timestamps for {name})"
        return pts, what

    def pan(self, step: int) -> str:
        """Pan the chart's window back (``step`` 1) or forward (-1) by half its width; back at the
        newest it follows again. Returns the words for it."""
        st = self.state
        name, seconds, records = self._window()
        pts = [p for p in st.history if p.accept_len is not None]
        if not pts:
            return "no records to pan over yet"
        if seconds is not None and math.isinf(seconds):
            return "the window is everything kept: nothing to pan (> narrows it)"
        if self._by_time(pts):
            assert seconds is not None
            stamps = [p.timestamp for p in pts if p.timestamp is not None]
            newest, oldest = max(stamps), min(stamps)
            if newest - oldest <= seconds and self.pan_end is None:
                return f"every record kept is in the window ({name}): nothing to pan (> narrows it)"
            end = (newest if self.pan_end is None else self.pan_end) - step * seconds / 2
            end = max(end, min(newest, oldest + seconds / 2))  # not past the oldest record kept
            self.pan_end = None if end >= newest else end
        else:
            half = max(1, records // 2)
            if st.seq - pts[0].seq < records and self.pan_end is None:
                return f"every record kept is in the window ({records:,} records): nothing to pan"
            end_seq = float(st.seq if self.pan_end is None else self.pan_end) - step * half
            end_seq = max(end_seq, float(min(st.seq, pts[0].seq + half)))
            self.pan_end = None if end_seq >= st.seq else end_seq
        self.redraw_chart()
        if self.pan_end is None:
            return "the newest records again: following"
        _, words = self.chart_points()
        return words

    def window_end_line(self) -> int | None:
        """The log line of the newest record in the chart's window when it is panned (``g`` goes
        there in the log tail), else None."""
        if self.pan_end is None:
            return None
        pts, _ = self.chart_points()
        return pts[-1].line_no if pts else None

    def chart_data(self, ylim: tuple[float, float] | None) -> ChartData:
        st = self.state
        pts, words = self.chart_points()
        seqs = [float(p.seq) for p in pts]
        timed = bool(pts) and all(p.timestamp is not None for p in pts)
        xs = [p.timestamp for p in pts] if timed else seqs

        def x_of(seq: float) -> float:  # a record number on the x axis (the record at or after it)
            if not timed:
                return seq
            k = min(len(seqs) - 1, bisect_left(seqs, seq))
            return xs[k]

        def label(idx: int) -> str:
            seg = st.segment(idx)
            text = f"seg {idx}" + (f": {seg.label or seg.config.label()}" if seg is not None else "")
            return cut(text.replace(" draft=", " "), 80)

        bounds = []
        first = seqs[0] if seqs else None
        edge = self._segment_at(first) if first is not None else None
        if first is not None and edge is not None:  # the segment at the left edge (segment 0 too)
            bounds.append((xs[0], label(edge), "accent"))
        for seq, idx in st.boundaries:
            if first is not None and seq > first:
                bounds.append((x_of(seq), label(idx), "accent"))
        marks = [(float(seq), f"M{n}") for seq, n, _ in st.marks] + [
            (seq + 0.5, w) for seq, w in st.file_marks
        ]
        axis = "x: time by the log's clock" if timed else "x: record #"
        keys = "< > window, { } pan" + (", g its newest line" if self.pan_end is not None else "")
        starts = {
            i for i in range(1, len(pts)) if pts[i].segment != pts[i - 1].segment
        }  # no line across a restart
        empty = "waiting for metric lines…"
        if self.pan_end is not None and not pts:  # panned into a stretch without records (a gap)
            empty = f"no records in this window ({words}; }} later)"
        return ChartData(
            [ChartSeries("accept len", xs, [p.accept_len for p in pts], "primary", starts=starts)],
            bounds,
            [(x_of(seq), text) for seq, text in marks if first is not None and seq >= first],
            ylim,
            xlabel=f"accept len, {words} ({axis}; {keys})",
            time_axis=timed,
            empty_text=empty,
        )

    def _segment_at(self, seq: float) -> int | None:
        """The index of the segment that record ``seq`` belongs to (boundaries are kept for the
        segments opened while reading; the first segment has none)."""
        st = self.state
        before = [idx for start, idx in st.boundaries if start <= seq]
        if before:
            return before[-1]
        segs = [s.index for s in st.stats.segments]
        if not st.boundaries:
            return segs[-1] if segs else None
        nxt = st.boundaries[0][1]
        pos = segs.index(nxt) if nxt in segs else 0
        return segs[pos - 1] if pos > 0 else None

    def set_window(self, index: int) -> None:
        """Show the chart's time window ``WINDOWS[index]`` (redrawn now when it is shown); a
        panned window keeps its end (a window of records and one of time do not share one)."""
        new = max(0, min(len(WINDOWS) - 1, index))
        if (WINDOWS[new] is None) != (WINDOWS[self.window] is None):
            self.pan_end = None
        self.window = new
        self.redraw_chart()
