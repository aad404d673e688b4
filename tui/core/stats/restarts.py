"""Restarts the records themselves show: an elapsed clock that goes back (llama.cpp's prefix is
time since the server started, so a new server starts again at 0.0x) — found here on the columns,
so every reader (the line parser, the Python and C scanners) gives the same segments; counters
that go back are the parsers' (``Record.extra[RESTART]``, :meth:`SourceStats.on_counter_reset`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.core.model.columns import RecordColumns
    from tui.core.model.records import Record
    from tui.core.stats.precompute import Precomputed
    from tui.core.stats.segments import SourceStats


SLACK = 1.0  # seconds: a clock that goes back less is not a restart (lines of one second)


def first_drop(elapsed: Sequence[float], last: float | None) -> int | None:
    """The index of the first value more than :data:`SLACK` below the one before it (``last``
    before the first; NaN, a value not printed, is skipped), None when the clock never goes back.
    A new server's first record comes after its model loaded (seconds), so the drop is larger."""
    prev = last
    for i, x in enumerate(elapsed):
        if x != x:
            continue
        if prev is not None and x < prev - SLACK:
            return i
        prev = x
    return None


def last_value(elapsed: Sequence[float], last: float | None) -> float | None:
    """The last printed value (``last`` when none is)."""
    for x in reversed(elapsed):
        if x == x:
            return x
    return last


def cut_at_clock(
    stats: SourceStats, cols: RecordColumns, raws: Sequence[str] | None, reduced: Precomputed | None
) -> bool:
    """True when the run went into ``stats`` here, cut where its elapsed clock went back (a new
    server: a segment opens there, reason ``clock_reset``); False: nothing done, add it whole."""
    el = cols.values["elapsed"]
    i = first_drop(el, stats.last_elapsed)
    if i is None or cols.printed_nan:  # (a run with printed NaN is not cut: kept whole)
        stats.last_elapsed = last_value(el, stats.last_elapsed)
        return False
    if i > 0:
        stats.add_columns(cols.slice(0, i), raws[:i] if raws is not None else None)
    stats.last_elapsed = None
    seg = stats.new_segment("clock_reset", cols.line_no(i), None)
    seg.markers.append("clock_reset")
    rest = cols.slice(i, cols.n) if i else cols
    stats.add_columns(rest, raws[i:] if raws is not None else None, None if i else reduced)
    return True


def counter_reset(stats: SourceStats, r: Record) -> None:
    """A record whose cumulative counters went back (``Record.extra[RESTART]``): the server
    restarted with no startup line in the log. A segment opens before it (the same one when a
    startup marker, or the elapsed clock, just opened one), its config unknown."""
    if r.elapsed is not None and stats.current.markers[-1:] == ["clock_reset"]:
        return  # the same restart: its clock went back at the records before
    seg = stats.new_segment("counter_reset", r.line_no, r.timestamp)
    if not seg.markers or seg.markers[-1] != "counter_reset":
        seg.markers.append("counter_reset")
