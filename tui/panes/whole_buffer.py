"""A pane fed a whole buffer at once: a replay at full speed hands over ~1 MiB of lines at a time
(``LineBatch.data``), and the pane takes it the way ``specwatch summary`` takes a chunk — the
whole-buffer scanner (:mod:`tui.core.formats.fastscan`, C when built) and a
:class:`tui.core.pipeline.whole.Summarizer` whose driver is the pane itself — instead of parsing
every line in Python. The statistics are the same either way (the fast path's contract: its
columns equal the line parser's records); the pane keeps its chart history, the raw tail's tags
and the segment boundaries from the runs and items as they go in (``PaneState.folded_run``,
``PaneState.folded``).

A buffer the scanner refuses (a line no canonical shape fits, an oversized line, an args dump
still open) is not taken: the caller parses its lines one by one, in slices, as for any source.
Imported when the first such buffer arrives (the summary machinery is not needed to start).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING

from tui.core.formats.fastscan import Scan, scan_chunk
from tui.core.pipeline.chunks import has_oversized
from tui.core.pipeline.whole import Summarizer
from tui.core.sources.base import LineBatch

if TYPE_CHECKING:
    from tui.panes.state import PaneState


def scan(state: PaneState, data: bytes) -> Scan | None:
    """The buffer's records as columns, or None when it must go line by line."""
    if not state.parser.idle or has_oversized(data):
        return None
    return scan_chunk(data, state.parser.timestamps.year_hint)


def reader(state: PaneState) -> Summarizer:
    """The whole-buffer reader that folds into ``state`` (its parser and statistics are the
    pane's, read at every call: a seek back gives the pane new ones)."""
    return Summarizer(state.name, state.label, driver=state)


def fold(s: Summarizer, sc: Scan, data: bytes, offset: int, first_line_no: int) -> None:
    """Fold ``data`` (whole lines from byte ``offset``, the first one numbered ``first_line_no``)
    whose scan is ``sc`` into the reader's pane."""
    s.lines = first_line_no - 1
    s.feed(data, offset, sc)


def pieces(batch: LineBatch, nbytes: int) -> list[LineBatch]:
    """``batch`` (with ``data``) cut at line starts into batches of about ``nbytes`` bytes each,
    each with its part of ``data``: the work between two yields to the event loop stays small."""
    data = batch.data
    assert data is not None
    if len(data) <= nbytes:
        return [batch]
    offs = batch.offsets
    base = offs[0]
    out = []
    a = 0
    while a < len(offs):
        b = bisect_left(offs, offs[a] + nbytes, a + 1)
        end = offs[b] - base if b < len(offs) else len(data)
        out.append(
            LineBatch(
                batch.source,
                batch.lines[a:b],
                offs[a:b],
                batch.first_line_no + a,
                batch.path,
                batch.kind,
                data[offs[a] - base : end],
            )
        )
        a = b
    return out
