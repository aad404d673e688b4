"""Bytes to lines, shared by every source: byte offsets, line numbers, the held partial line,
CRLF, invalid UTF-8 and oversized lines; and where to start reading a file (``--from``).

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

from tui.core.sources.base import MAX_LINE_BYTES, LineBatch

# (lines, offsets, first_line_no): what the splitter hands back for one chunk.
Split = tuple[list[str], list[int], int]

_COUNT_BLOCK = 4 << 20

# An oversized line (more than MAX_LINE_BYTES bytes, e.g. a 10 MB decode line) is not read: it
# stands in the stream as "\n" + its byte length. No real line can look like that (lines are
# split at "\n"), so the parser tells it apart for sure and reports it as ``Oversized``.
OVERSIZED_LEAD = "\n"


def oversized_line(nbytes: int) -> str:
    """The stand-in for an oversized line of ``nbytes`` bytes (its newline not counted)."""
    return f"{OVERSIZED_LEAD}{nbytes}"


def oversized_bytes(line: str) -> int | None:
    """The byte length of the oversized line ``line`` stands for; None for a real line."""
    if line[:1] != OVERSIZED_LEAD:
        return None
    digits = line[1:]
    return int(digits) if digits.isascii() and digits.isdigit() else None


def _strip_cr(lines: list[str]) -> list[str]:
    return [s[:-1] if s.endswith("\r") else s for s in lines]


class LineSplitter:
    """Turns a byte stream into complete lines with their byte offsets and 1-based numbers.

    * A partial last line is held until its newline arrives (``flush`` gives it up at the end).
    * One ``\\r`` before the ``\\n`` is dropped (CRLF); other ``\\r`` are kept.
    * Invalid UTF-8 is replaced (U+FFFD), never fatal.
    * A line longer than ``MAX_LINE_BYTES`` is not kept: once it is known to be too long its
      bytes are only counted, and at its newline it is emitted as ``oversized_line(length)``.
      Nothing is ever buffered beyond ``MAX_LINE_BYTES`` plus one chunk.
    """

    __slots__ = ("_partial", "_over", "_line_start", "pos", "line_no")

    def __init__(self, offset: int = 0, line_no: int = 1) -> None:
        self.reset(offset, line_no)

    def reset(self, offset: int = 0, line_no: int = 1) -> None:
        self._partial = bytearray()
        self._over = -1  # bytes of the oversized line being skipped (-1: none)
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
            self._hold(data)
            return lines, offsets, first_no
        # 1. the line that was held (or starts this chunk) ends at the first newline
        if self._over >= 0:
            lines.append(oversized_line(self._over + nl))
            self._over = -1
        else:
            if self._partial:
                self._partial += data[:nl]
                head: bytes | bytearray = self._partial
            else:
                head = data[:nl]
            if len(head) > MAX_LINE_BYTES:
                lines.append(oversized_line(len(head)))
            else:
                text = head.decode("utf-8", "replace")
                lines.append(text[:-1] if text.endswith("\r") else text)
            self._partial = bytearray()
        offsets.append(self._line_start)
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
                        block[i] = oversized_line(len(p))
            if b"\r" in region:
                block = _strip_cr(block)
            lines += block
            offsets += offs
        # 3. what follows the last newline is the start of the next line
        self._line_start = base + last + 1
        if last + 1 < len(data):
            self._hold(data[last + 1 :])
        self.line_no = first_no + len(lines)
        return lines, offsets, first_no

    def _hold(self, data: bytes) -> None:
        if self._over >= 0:
            self._over += len(data)
            return
        self._partial += data
        if len(self._partial) > MAX_LINE_BYTES:  # too long: from now on only counted
            self._over = len(self._partial)
            self._partial = bytearray()

    def flush(self) -> Split:
        """Give up the held partial line (end of input, or the file is finished with)."""
        first_no = self.line_no
        lines: list[str] = []
        offsets: list[int] = []
        if self._over >= 0:
            lines.append(oversized_line(self._over))
        elif self._partial:
            text = self._partial.decode("utf-8", "replace")
            lines.append(text[:-1] if text.endswith("\r") else text)
        if lines:
            offsets.append(self._line_start)
            self.line_no += 1
        self._partial = bytearray()
        self._over = -1
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
