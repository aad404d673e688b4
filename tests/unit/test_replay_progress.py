"""``replay --max`` progress counts what is in the statistics (issue 31, item 8): the source reads
the whole file in one batch (its own progress is 100% at once), the pane's header says how far
the lines fed into the numbers reach."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from tui.core.sources.base import LineBatch
from tui.core.sources.replay import ReplaySource
from tui.panes.state import PaneState

LINE = (
    "[2026-01-02 03:04:{s:02d} TP0] Decode batch, #running-req: 1, #token: 10, token usage: 0.01, "
    "accept len: 2.00, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 10.00, #queue-req: 0"
)


def test_the_header_percentage_is_that_of_the_lines_fed(tmp_path):
    path = tmp_path / "r.log"
    path.write_text("".join(LINE.format(s=i % 60) + "\n" for i in range(100)))

    async def run() -> None:
        src = ReplaySource(str(path), "r", speed=None, stay_open=True)
        it = aiter(src)
        batch = await anext(it)
        while not isinstance(batch, LineBatch):
            batch = await anext(it)
        try:
            check(src, batch)
        finally:
            await src.aclose()

    asyncio.run(run())


def check(src: ReplaySource, batch: LineBatch) -> None:
    assert src.progress == 1.0  # read ahead: all of it
    st = PaneState("r", replay=True, source=src)
    st.feed_lines(replace(batch, lines=batch.lines[:25], offsets=batch.offsets[:25], data=None))
    assert st.stats.records == 25
    assert abs(st.read_progress() - 0.25) < 0.01
    assert st.status_text().endswith(" 25%"), st.status_text()
    assert st.status_text(progress=0.1).endswith(" 10%")  # as drawn: the pane passes its numbers' progress
    rest = replace(batch, lines=batch.lines[25:], offsets=batch.offsets[25:], first_line_no=26, data=None)
    st.feed_lines(rest)
    assert st.read_progress() == 1.0 and st.status_text().endswith(" 100%")
