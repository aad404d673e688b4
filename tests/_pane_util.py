"""Feeding one pane two ways (a replay's batches as whole buffers, or line by line) and comparing the
two states (statistics, chart history, segment starts, raw tail, notices)."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

from tui.core.sources.base import LineBatch
from tui.core.sources.replay import ReplaySource
from tui.panes.state import PaneState


def flat(d, at: str = ""):
    if isinstance(d, dict):
        for k, v in d.items():
            yield from flat(v, f"{at}/{k}")
    elif isinstance(d, (list, tuple)):
        for i, v in enumerate(d):
            yield from flat(v, f"{at}[{i}]")
    else:
        yield at, d


def close(x, y) -> bool:
    """Equal; floats up to the rounding of sums taken in other groupings (buffers vs slices)."""
    if isinstance(x, float) and isinstance(y, float):
        return (x != x and y != y) or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)
    return x == y


def same(a: PaneState, b: PaneState) -> None:
    da, db = dict(flat(a.stats.to_dict())), dict(flat(b.stats.to_dict()))
    assert da.keys() == db.keys()
    assert [k for k in da if not close(da[k], db[k])] == []
    assert (a.lines, a.seq, a.raw_seq) == (b.lines, b.seq, b.raw_seq)
    assert list(a.history) == list(b.history)
    assert list(a.boundaries) == list(b.boundaries)
    assert [tuple(r) for r in a.raw] == [tuple(r) for r in b.raw]
    assert [n.message for n in a.take_notices()] == [n.message for n in b.take_notices()]


def batches(path: Path) -> list:
    async def run() -> list:
        src = ReplaySource(str(path), "r", speed=None)
        out = [b async for b in src]
        await src.aclose()
        return out

    return asyncio.run(run())


def fed(items: list, bulk: bool) -> tuple[PaneState, int]:
    st = PaneState("r", replay=True)
    fast = 0
    for b in items:
        if not isinstance(b, LineBatch):
            st.on_event(b)
        elif bulk and st.feed_buffer(b):
            fast += 1
        else:
            st.feed_lines(LineBatch(b.source, b.lines, b.offsets, b.first_line_no, b.path, b.kind))
    return st, fast
