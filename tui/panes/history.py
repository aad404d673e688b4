"""What a pane keeps of the newest records and lines (pure Python: no Textual here): the chart
history (:class:`History`, ``HISTORY`` Points) and the raw log tail (:class:`RawTail`, ``RAW_TAIL``
lines). Both take whole runs cheaply and make their small tuples only when read (a render, a
search, an export), so what a flood pushes out before then — a replay at full speed brings
hundreds of thousands of lines a second — costs nothing but a list reference.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any, NamedTuple

from tui.core.model.columns import RecordColumns
from tui.core.model.quantities import added
from tui.core.stats.checks import ranges, refusal

HISTORY = 10_000  # recent records per pane (charts, CSV export)
RAW_TAIL = 10_000  # recent log lines per pane (the log tail's scroll-back)


class Point(NamedTuple):
    """One record, as charts and the CSV export need it."""

    seq: int  # 1-based record number in this pane (the chart's x axis)
    line_no: int
    timestamp: float | None
    segment: int
    rank: str | None
    accept_len: float | None
    accept_rate: float | None
    throughput: float | None
    running_req: int | None
    # the values of the quantities registered beyond the built-in ones, in the order of
    # quantities.added() when the point was made (None: none registered)
    more: tuple[float | None, ...] | None = None


class RawLine(NamedTuple):
    seq: int  # running number of raw lines in this pane
    line_no: int | None
    text: str
    kind: str  # "line", "metric", "marker", "malformed", "event", "stderr", "mark"


def _checked(x: float, lo: float, hi: float) -> float | None:
    """A column's value when the statistics take it (within [lo, hi], the bounds of
    :func:`tui.core.stats.checks.refusal`), else None: not printed or refused is a gap on every
    chart and scale. (NaN and inf fail the comparison.)"""
    return x if lo <= x <= hi else None


def _value(x: float, bounds: tuple[float, float] | None) -> float | None:
    """An added quantity's value in a Point: None where not printed or refused."""
    if bounds is None:
        return x if x == x else None
    return _checked(x, *bounds)


def added_values(r: Any, bad: Mapping[str, str]) -> tuple[float | None, ...] | None:
    """A record's values of the added quantities, for a Point (None where refused: ``bad``)."""
    qs = added()
    if not qs:
        return None
    return tuple(None if q.name in bad else r.value(q.name) for q in qs)


def _bounds(name: str, depth: int | None = None, row_depth: int | None = None) -> tuple[float, float]:
    """The closed interval :func:`tui.core.stats.checks.refusal` lets through, widened by its
    tolerance (found by asking it, so the two cannot differ)."""
    lo, hi = ranges()[name]
    if name == "accept_len" and row_depth:
        hi = row_depth + 1.0
    elif depth is not None and name == "accept_len":
        hi = depth + 1.0
    lo2, hi2 = lo - 1e-9, hi + 1e-9
    assert refusal(name, lo2, depth, row_depth) is None and refusal(name, hi2, depth, row_depth) is None
    return lo2, hi2


class History:
    """The newest ``HISTORY`` Points: added one by one (the line parser's records) or as runs of
    columns (a scanned buffer), in order."""

    def __init__(self) -> None:
        self._points: deque[Point] = deque(maxlen=HISTORY)
        self._runs: deque[tuple[RecordColumns, int, int, int | None]] = (
            deque()
        )  # (columns, seq before, segment, k)
        self._runs_n = 0

    def append(self, point: Point) -> None:
        self.points().append(point)

    def add_run(self, cols: RecordColumns, seq0: int, segment: int, depth: int | None = None) -> None:
        """Records ``seq0 + 1`` ... ``seq0 + cols.n`` of segment ``segment`` (``depth``: its draft
        depth k when known), Points when read; values the statistics refuse are gaps in them."""
        runs = self._runs
        runs.append((cols, seq0, segment, depth))
        self._runs_n += cols.n
        while self._runs_n - runs[0][0].n >= HISTORY:  # wholly pushed out already
            self._runs_n -= runs.popleft()[0].n

    def clear(self) -> None:
        self._points.clear()
        self._runs.clear()
        self._runs_n = 0

    def points(self) -> deque[Point]:
        if self._runs:
            skip = max(0, self._runs_n - HISTORY)
            for cols, seq0, segment, depth in self._runs:
                k = min(skip, cols.n)
                skip -= k
                nos, ranks, v, pp = cols.line_nos, cols.ranks, cols.values, cols.per_position
                ts, al, ar, tp, run = (
                    v[f] for f in ("timestamp", "accept_len", "accept_rate", "throughput", "running_req")
                )
                b_ts, b_ar, b_tp, b_run = map(
                    _bounds, ("timestamp", "accept_rate", "throughput", "running_req")
                )
                b_al = {0: _bounds("accept_len", depth)}  # by the row's per-position length (0: none)
                extra = [(cols.col(q.name), _bounds(q.name) if q.valid else None) for q in added()]
                for i in range(k, cols.n):
                    kr = len(pp[i] or ()) if pp is not None else 0
                    lo_al, hi_al = b_al.get(kr) or b_al.setdefault(kr, _bounds("accept_len", depth, kr))
                    r = _checked(run[i], *b_run)
                    self._points.append(
                        Point(
                            seq0 + i + 1,
                            cols.line_base + int(nos[i]) if nos is not None else 0,
                            _checked(ts[i], *b_ts),
                            segment,
                            ranks[i] if ranks is not None else None,
                            _checked(al[i], lo_al, hi_al),
                            _checked(ar[i], *b_ar),
                            _checked(tp[i], *b_tp),
                            None if r is None else int(r),
                            tuple(_value(c[i], b) for c, b in extra) if extra else None,
                        )
                    )
            self._runs.clear()
            self._runs_n = 0
        return self._points


class RawTail:
    """The newest ``RAW_TAIL`` lines of the log (and the events and marks between them), each
    numbered (``seq``) and tagged (metric / marker / malformed / line / event ...)."""

    def __init__(self) -> None:
        self._lines: deque[RawLine] = deque(maxlen=RAW_TAIL)
        # batches not yet made RawLines: (first seq, first line number, lines, tags by line number)
        self._batches: deque[tuple[int, int, list[str], dict[int, str]]] = deque()
        self._batches_n = 0
        self.seq = 0  # the newest line's seq

    def add_lines(self, lines: list[str], first_line_no: int, tags: dict[int, str]) -> None:
        """Consecutive lines of the log (``tags``: line number -> kind, "line" when absent)."""
        start = max(0, len(lines) - RAW_TAIL)
        if start:
            lines = lines[start:]
        batches = self._batches
        batches.append((self.seq + 1, first_line_no + start, lines, tags))
        self.seq += len(lines)
        self._batches_n += len(lines)
        while self._batches_n - len(batches[0][2]) >= RAW_TAIL:  # wholly pushed out already
            self._batches_n -= len(batches.popleft()[2])

    def note(self, text: str, kind: str) -> None:
        """A line of the app's own (an event, a mark, a command's stderr) after the log's lines."""
        lines = self.lines()
        self.seq += 1
        lines.append(RawLine(self.seq, None, text, kind))

    def lines(self) -> deque[RawLine]:
        if self._batches:
            skip = max(0, self._batches_n - RAW_TAIL)
            for seq, no, lines, tags in self._batches:
                k = min(skip, len(lines))
                skip -= k
                self._lines.extend(
                    RawLine(seq + i, no + i, lines[i], tags.get(no + i, "line")) for i in range(k, len(lines))
                )
            self._batches.clear()
            self._batches_n = 0
        return self._lines
