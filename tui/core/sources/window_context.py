"""The context of a time window (:mod:`tui.core.sources.window`): the last startup block before
its first line, read with the window so that the segment open at its start has its config and
rate definition (the restart's marker lines, its args dump, and the lines after them up to the
first metric line; :func:`startup_block`). A plain file's block is found by reading back from the
window's start (:func:`context_before`), a stream's is kept as the bytes before the window pass
(:class:`Context`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

CONTEXT_MAX = 1 << 20  # bytes of a startup block kept (its first ones: the args dump)


def _anchors() -> tuple[tuple[bytes, ...], tuple[bytes, ...]]:
    """(marker anchors, record anchors) of every family, as bytes."""
    from tui.core.formats import registry

    markers = tuple(a.encode() for f in registry.FORMATS for a in f.marker_anchors)
    records = tuple(a.encode() for f in registry.FORMATS for a in f.anchors)
    return markers, records


def _line_start(buf: bytes, pos: int) -> int:
    return buf.rfind(b"\n", 0, pos) + 1


def startup_block(buf: bytes) -> tuple[int, int, bool, bool] | None:
    """The last startup block of ``buf`` (whole lines): (start, end, open at the start, open at
    the end). It runs from the first marker line after the last metric line before its last
    marker line, to the first metric line after that marker (or the end of ``buf``): the lines
    that open the segment open at the end of ``buf``, with no metric line among them (so they
    update one segment). None when ``buf`` holds no marker line."""
    markers, records = _anchors()
    m = max((buf.rfind(a) for a in markers), default=-1)
    if m < 0:
        return None
    m = _line_start(buf, m)
    r = max((buf.rfind(a, 0, m) for a in records), default=-1)
    after = 0 if r < 0 else buf.find(b"\n", r) + 1
    start = _line_start(buf, min((i for a in markers if (i := buf.find(a, after)) >= 0), default=m))
    nl = buf.find(b"\n", m)
    tail = len(buf) if nl < 0 else nl + 1
    e = min((i for a in records if (i := buf.find(a, tail)) >= 0), default=-1)
    end = len(buf) if e < 0 else _line_start(buf, e)
    return start, end, r < 0, e < 0


@dataclass
class Context:
    """The last startup block of a stream's bytes before a window, kept as they pass."""

    parts: list[bytes] = field(default_factory=list)
    open_end: bool = False  # no metric line after the block's last marker yet
    size: int = 0

    def add(self, buf: bytes) -> None:
        if not buf:
            return
        blk = startup_block(buf)
        if blk is None:
            if self.open_end:
                _, records = _anchors()
                e = min((i for a in records if (i := buf.find(a)) >= 0), default=-1)
                self._keep(buf if e < 0 else buf[: _line_start(buf, e)])
                self.open_end = e < 0
            return
        start, end, open_start, open_end = blk
        if not (open_start and self.open_end):
            self.parts, self.size = [], 0
            self._keep(buf[start:end])
        else:
            self._keep(buf[:end])
        self.open_end = open_end

    def _keep(self, b: bytes) -> None:
        room = CONTEXT_MAX - self.size
        if room > 0 and b:
            self.parts.append(b[:room])
            self.size += min(room, len(b))

    def text(self) -> bytes:
        return b"".join(self.parts)


CONTEXT_STEP = 1 << 20


def context_before(fd: int, lo: int) -> tuple[int, int] | None:
    """[start, end) of the last startup block before the line start ``lo``, read back from it in
    steps of CONTEXT_STEP (each byte once); None when none is before it."""
    pos = lo
    while pos > 0:
        a = max(0, pos - CONTEXT_STEP)
        while True:
            chunk = os.pread(fd, pos - a, a)
            skip = chunk.find(b"\n") + 1 if a > 0 else 0
            blk = startup_block(chunk[skip:])
            if blk is None or not blk[2] or a == 0 or pos - a >= 8 * CONTEXT_STEP:
                break
            a = max(0, a - CONTEXT_STEP)  # the block may begin further back
        if blk is not None:
            start, end = a + skip + blk[0], a + skip + blk[1]
            if blk[3] and end == pos:  # open at the chunk's end: up to the first metric line after it
                end = _first_record(fd, pos, lo)
            return start, end
        pos = a + skip if a > 0 else 0
    return None


def _first_record(fd: int, pos: int, end: int) -> int:
    """The start of the first line in [pos, end) holding a metric line's anchor (``end``: none)."""
    _, records = _anchors()
    while pos < end:
        data = os.pread(fd, min(CONTEXT_STEP, end - pos), pos)
        if not data:
            break
        cut = data.rfind(b"\n") + 1 or len(data)
        e = min((i for a in records if (i := data.find(a, 0, cut)) >= 0), default=-1)
        if e >= 0:
            return pos + _line_start(data, e)
        pos += cut
    return end
