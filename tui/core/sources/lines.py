"""Bytes to lines, shared by every source: byte offsets, line numbers, the held partial line,
CRLF, invalid UTF-8 and the 1 MiB cut; and where to start reading a file (``--from``).

The splitter works on whole chunks (one ``decode`` and one ``split`` per chunk, offsets from a
C-level ``accumulate``), so a busy log or a replay costs a few operations per *chunk*, not a
Python loop per line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from itertools import accumulate
from operator import add

from tui.core.sources.base import CUT_MARKER, MAX_LINE_BYTES, LineBatch

# (lines, offsets, first_line_no): what the splitter hands back for one chunk.
Split = tuple[list[str], list[int], int]

_COUNT_BLOCK = 4 << 20


def _cut(data: bytes | bytearray) -> str:
    """The first MAX_LINE_BYTES bytes of an over-long line (not splitting a UTF-8 character),
    decoded, with CUT_MARKER appended."""
    j = MAX_LINE_BYTES
    while j > MAX_LINE_BYTES - 4 and j < len(data) and (data[j] & 0xC0) == 0x80:
        j -= 1
    return bytes(data[:j]).decode("utf-8", "replace") + CUT_MARKER


def _strip_cr(lines: list[str]) -> list[str]:
    return [s[:-1] if s.endswith("\r") else s for s in lines]


class LineSplitter:
    """Turns a byte stream into complete lines with their byte offsets and 1-based numbers.

    * A partial last line is held until its newline arrives (``flush`` gives it up at the end).
    * One ``\\r`` before the ``\\n`` is dropped (CRLF); other ``\\r`` are kept.
    * Invalid UTF-8 is replaced (U+FFFD), never fatal.
    * A line longer than ``MAX_LINE_BYTES`` is emitted as soon as it is known to be too long,
      cut at ``MAX_LINE_BYTES`` with ``CUT_MARKER`` appended; the rest of it, up to its newline,
      is skipped. Nothing is ever buffered beyond ``MAX_LINE_BYTES`` plus one chunk.
    """

    __slots__ = ("_partial", "_discarding", "_line_start", "pos", "line_no")

    def __init__(self, offset: int = 0, line_no: int = 1) -> None:
        self.reset(offset, line_no)

    def reset(self, offset: int = 0, line_no: int = 1) -> None:
        self._partial = bytearray()
        self._discarding = False
        self._line_start = offset  # byte offset of the held (partial) line
        self.pos = offset  # byte offset just after everything fed so far
        self.line_no = line_no  # number of the next line to be emitted

    @property
    def line_start(self) -> int:
        """Byte offset where the next line to be emitted starts."""
        return self._line_start

    @property
    def pending(self) -> int:
        """Bytes held for a line whose newline has not arrived yet."""
        return len(self._partial)

    def feed(self, data: bytes) -> Split:
        lines: list[str] = []
        offsets: list[int] = []
        first_no = self.line_no
        if not data:
            return lines, offsets, first_no
        base = self.pos
        self.pos = base + len(data)
        nl = data.find(b"\n")
        if nl < 0:
            self._hold(data, lines, offsets)
            return lines, offsets, first_no
        # 1. the line that was held (or starts this chunk) ends at the first newline
        if self._discarding:
            self._discarding = False
        else:
            if self._partial:
                self._partial += data[:nl]
                head: bytes | bytearray = self._partial
            else:
                head = data[:nl]
            if len(head) > MAX_LINE_BYTES:
                lines.append(_cut(head))
            else:
                text = head.decode("utf-8", "replace")
                lines.append(text[:-1] if text.endswith("\r") else text)
            offsets.append(self._line_start)
            self._partial = bytearray()
        # 2. the complete lines between the first and the last newline, as a block
        last = data.rfind(b"\n")
        if last > nl:
            region = data[nl + 1 : last]
            block = region.decode("utf-8", "replace").split("\n")
            if region.isascii():
                lengths = map(len, block)
                pieces = None
            else:
                pieces = region.split(b"\n")
                lengths = map(len, pieces)
            offs = list(accumulate(map((1).__add__, lengths), add, initial=base + nl + 1))
            offs.pop()
            if len(region) > MAX_LINE_BYTES:
                pieces = pieces if pieces is not None else region.split(b"\n")
                for i, p in enumerate(pieces):
                    if len(p) > MAX_LINE_BYTES:
                        block[i] = _cut(p)
            if b"\r" in region:
                block = _strip_cr(block)
            lines += block
            offsets += offs
        # 3. what follows the last newline is the start of the next line
        self._line_start = base + last + 1
        if last + 1 < len(data):
            self._hold(data[last + 1 :], lines, offsets)
        self.line_no = first_no + len(lines)
        return lines, offsets, first_no

    def _hold(self, data: bytes, lines: list[str], offsets: list[int]) -> None:
        if self._discarding:
            return
        self._partial += data
        if len(self._partial) > MAX_LINE_BYTES:
            lines.append(_cut(self._partial))
            offsets.append(self._line_start)
            self._partial = bytearray()
            self._discarding = True
            self.line_no += 1

    def flush(self) -> Split:
        """Give up the held partial line (end of input, or the file is finished with)."""
        first_no = self.line_no
        lines: list[str] = []
        offsets: list[int] = []
        if self._partial:
            text = self._partial.decode("utf-8", "replace")
            lines.append(text[:-1] if text.endswith("\r") else text)
            offsets.append(self._line_start)
            self.line_no += 1
        self._partial = bytearray()
        self._discarding = False
        self._line_start = self.pos
        return lines, offsets, first_no


def make_batch(source: str, split: Split, path: str | None = None) -> LineBatch | None:
    lines, offsets, first_no = split
    if not lines:
        return None
    return LineBatch(source, lines, offsets, first_no, path)


# ---------------------------------------------------------------------------------------------
# Where to start reading a file: --from start | end | -N


@dataclass(frozen=True, slots=True)
class StartAt:
    """``mode`` is "start", "end" or "last" (the last ``lines`` lines)."""

    mode: str = "start"
    lines: int = 0

    def __str__(self) -> str:
        return f"-{self.lines}" if self.mode == "last" else self.mode


START = StartAt("start")
END = StartAt("end")

_LAST_RX = re.compile(r"-(\d+)")


def parse_start(text: str) -> StartAt:
    """``start``, ``end`` or ``-N`` (the last N lines); raises ValueError otherwise."""
    t = text.strip().lower()
    if t in ("start", "beginning", "begin"):
        return START
    if t == "end":
        return END
    m = _LAST_RX.fullmatch(t)
    if m:
        return StartAt("last", int(m.group(1)))
    raise ValueError(f"--from must be start, end or -N (the last N lines), not {text!r}")


def count_newlines(fd: int, end: int) -> int:
    """Newlines in bytes [0, end) of an open file (blocking; run it in a thread when large)."""
    n = 0
    pos = 0
    while pos < end:
        block = os.pread(fd, min(_COUNT_BLOCK, end - pos), pos)
        if not block:
            break
        n += block.count(b"\n")
        pos += len(block)
    return n


def find_start(fd: int, size: int, start: StartAt) -> int:
    """Byte offset where reading should begin (always the start of a line).

    ``end`` starts after the last newline: a partial last line being written is read whole
    once its newline arrives. ``-N`` counts a partial last line as a line, as ``tail -n`` does.
    """
    if start.mode == "start" or size == 0:
        return 0
    if start.mode == "end" or start.lines <= 0:
        want, end = 1, size  # after the last newline
    else:
        # the N-th newline before the last line's own terminator starts the N-th last line
        want = start.lines
        end = size - 1 if os.pread(fd, 1, size - 1) == b"\n" else size
    found = 0
    pos = end
    block_size = 64 * 1024
    while pos > 0:
        lo = max(0, pos - block_size)
        block = os.pread(fd, pos - lo, lo)
        i = len(block)
        while True:
            i = block.rfind(b"\n", 0, i)
            if i < 0:
                break
            found += 1
            if found == want:
                return lo + i + 1
        pos = lo
        block_size = min(block_size * 2, 4 << 20)
    return 0
