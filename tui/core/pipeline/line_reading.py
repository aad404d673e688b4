"""The slow path of whole-log reading: lines through the line parser, found at ``memchr``
speed (only the lines that hold an anchor, and the lines an args dump goes on over, are parsed;
every other line is only counted), in slices of bounded size. :class:`LineReading` is the part of
:class:`tui.core.pipeline.whole.Summarizer` that does it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.core.formats.fastscan import anchor_lines
from tui.core.model.records import Item, Record
from tui.core.pipeline.chunks import has_oversized
from tui.core.sources.base import MAX_LINE_BYTES

if TYPE_CHECKING:
    from tui.core.formats import LineParser
    from tui.core.pipeline.driver import Driver

SLOW_SLICE = 1 << 20


class LineReading:
    """Lines of a chunk through :attr:`parser` into :attr:`driver`, with the line count kept."""

    driver: Driver
    lines: int
    slow_chunks: int
    elapsed: tuple[float, float] | None
    oversized: int
    oversized_bytes: int
    oversized_largest: int
    oversized_examples: list[dict[str, int]]

    @property
    def parser(self) -> LineParser:
        return self.driver.parser

    def add_oversized(self, line_no: int, offset: int, nbytes: int) -> None:
        """A line longer than MAX_LINE_BYTES: counted with its length, never parsed."""
        self.oversized += 1
        self.oversized_bytes += nbytes
        self.oversized_largest = max(self.oversized_largest, nbytes)
        if len(self.oversized_examples) < 20:
            self.oversized_examples.append({"line": line_no, "offset": offset, "bytes": nbytes})

    def _slow(self, buf: bytes, offset: int) -> None:
        self.slow_chunks += 1
        start = 0
        while start < len(buf):  # in slices of ~1 MiB of lines: bounded transient memory
            end = buf.find(b"\n", min(start + SLOW_SLICE, len(buf) - 1))
            end = len(buf) if end < 0 else end + 1
            if has_oversized(buf, start, end):
                self._every_line(buf[start:end], offset + start)
            else:
                self._anchor_lines(buf[start:end], offset + start)
            start = end

    def _anchor_lines(self, buf: bytes, offset: int) -> None:
        """The line parser on the lines that hold an anchor (found at ``memchr`` speed), and on
        the lines continuing an args dump; every other line yields nothing, so it is only
        counted. The same items, in the same order, as feeding every line (no line of ``buf``
        is oversized)."""
        base, fed = self.lines, 0
        counted_at, counted = 0, 0  # newlines in buf[:counted_at]
        nxt = 0  # lines starting before this have been fed
        items: list[Item] = []  # fed at the end of the slice: runs of records go in as columns
        starts = anchor_lines(buf)
        if not self.parser.idle:  # an args dump from the slice before goes on here
            starts.insert(0, 0)
        for ls in starts:
            if ls < nxt:
                continue
            counted += buf.count(b"\n", counted_at, ls)
            counted_at = ls
            while True:  # this line, then the lines an args dump goes on over
                end = buf.find(b"\n", ls)
                end = len(buf) if end < 0 else end
                self._feed_line(buf[ls:end], base + counted + 1, offset + ls, items)
                fed += 1
                nxt = end + 1
                if self.parser.idle or nxt >= len(buf):
                    break
                ls = nxt
                counted += 1
                counted_at = ls
        total = buf.count(b"\n") + (0 if buf.endswith(b"\n") else 1)
        self.lines = base + total
        self.parser.lines += total - fed
        self._feed_items(items)

    def _every_line(self, buf: bytes, offset: int) -> None:
        """Every line through the line parser, except oversized ones: those are only counted."""
        items: list[Item] = []
        no = self.lines
        pieces = buf.split(b"\n")
        if pieces and pieces[-1] == b"":
            pieces.pop()
        for raw in pieces:
            no += 1
            if len(raw) > MAX_LINE_BYTES:  # not parsed: only counted, with its length
                self.parser.lines += 1
                self.add_oversized(no, offset, len(raw))
            else:
                self._feed_line(raw, no, offset, items)
            offset += len(raw) + 1
        self.lines = no
        self._feed_items(items)

    def _feed_line(self, raw: bytes, no: int, offset: int, items: list[Item]) -> None:
        line = raw.decode("utf-8", "replace")
        if line.endswith("\r"):
            line = line[:-1]
        item = self.parser.feed(line, no, offset)
        if item is not None:
            items.append(item)

    def _feed_items(self, items: list[Item]) -> None:
        self.driver.fold(items)
        for it in items:
            if isinstance(it, Record) and it.elapsed is not None:
                first = self.elapsed[0] if self.elapsed else it.elapsed
                self.elapsed = (first, it.elapsed)
