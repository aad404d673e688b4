"""Where the segments of a saved log start, for replay's next/previous segment.

The file is parsed once, lazily and only as far as a question needs, in chunks that yield to the
event loop. A startup marker opens a new segment exactly when the statistics would open one
(:meth:`tui.core.stats.SourceStats.new_segment`): when the current segment has measured
something (a record or a malformed metric line); markers that follow one another (args dump,
ready line, uvicorn start) belong to the same segment start.
"""

from __future__ import annotations

import asyncio
import bisect

from tui.core.formats import LineParser
from tui.core.model.records import Malformed, Marker, Record
from tui.core.sources.lines import LineSplitter, make_batch
from tui.core.sources.replay_input import ReplayInput

CHUNK = 1 << 20


class SegmentIndex:
    def __init__(self, path: str, data: ReplayInput | None = None) -> None:
        """``data``: the bytes to index (by default the file ``path``), closed with the index."""
        self.path = path
        self._data = data if data is not None else ReplayInput([path])
        self._splitter = LineSplitter()
        self._parser = LineParser("replay-index", ref_time=self._data.mtime)
        self._has_data = False
        self.starts: list[int] = [0]  # byte offset of the first line of each segment
        self.start_lines: list[int] = [1]
        self.start_times: list[float | None] = [None]
        self.scanned = 0  # every line starting before this offset has been parsed
        self.done = False

    def close(self) -> None:
        self._data.close()

    def _scan_chunk(self) -> None:
        data = self._data.pread(CHUNK, self._splitter.pos)
        split = self._splitter.feed(data) if data else self._splitter.flush()
        if not data:
            self.done = True
        batch = make_batch("replay-index", split, self.path)
        if batch is not None:
            for item in self._parser.feed_batch(batch):
                if isinstance(item, (Record, Malformed)):
                    self._has_data = True
                elif isinstance(item, Marker) and not item.continuation and self._has_data:
                    self._has_data = False
                    self.starts.append(item.offset)
                    self.start_lines.append(item.line_no)
                    self.start_times.append(item.timestamp)
        self.scanned = self._splitter.pos if self.done else self._splitter.line_start

    async def _scan_until(self, enough) -> None:
        while not enough() and not self.done:
            self._scan_chunk()
            await asyncio.sleep(0)

    async def scan_all(self) -> None:
        await self._scan_until(lambda: False)

    async def segment_at(self, offset: int) -> int:
        """The index of the segment the line starting at ``offset`` belongs to."""
        await self._scan_until(lambda: self.scanned > offset)
        return max(0, bisect.bisect_right(self.starts, offset) - 1)

    async def start_of(self, index: int) -> tuple[int, int] | None:
        """(byte offset, line number) where segment ``index`` starts; None when there is none."""
        if index < 0:
            return None
        await self._scan_until(lambda: len(self.starts) > index)
        if index >= len(self.starts):
            return None
        return self.starts[index], self.start_lines[index]
