"""The window of a plain file found by binary search on its timestamps, its premise checked
(:func:`find_range`; the rules are in :mod:`tui.core.sources.window`): the stamps it sees must go
forward, else the file is read in order."""

from __future__ import annotations

import os
from dataclasses import dataclass

from tui.core.formats.timestamps import TimestampReader
from tui.core.sources.window import Cutter, Window, _last_in, _lines, _stamp, _ts_text
from tui.core.sources.window_context import context_before


def offset_at(
    fd: int, size: int, t: float, ref_time: float | None, lo: int = 0, seen: list | None = None
) -> int:
    """The offset of the first line at or after ``lo`` stamped at or after ``t`` in the plain file
    ``fd`` of ``size`` bytes (``size`` when there is none), found by binary search: the stamps
    are taken to go forward. ``lo`` is a line start. ``seen`` gets the (offset, stamp) of every
    stamped line it lands on (:func:`find_range` checks them)."""
    hi = size
    step = 1 << 16
    while hi - lo > step:
        mid = (lo + hi) // 2
        nl = _find_newline(fd, mid, hi)
        if nl is None:
            hi = mid
            continue
        found = _first_stamp(fd, nl, hi, ref_time)
        if found is not None and seen is not None:
            seen.append((found[2], found[0]))
        if found is None or found[0] >= t:
            hi = mid
        else:
            lo = found[1]  # the end of that stamped line: before the answer
    return _scan(fd, lo, size, t, ref_time, seen)


def _find_newline(fd: int, pos: int, hi: int) -> int | None:
    """The start of the first line after ``pos`` (below ``hi``), or None."""
    while pos < hi:
        data = os.pread(fd, min(1 << 16, hi - pos), pos)
        if not data:
            return None
        i = data.find(b"\n")
        if i >= 0:
            return pos + i + 1 if pos + i + 1 < hi else None
        pos += len(data)
    return None


def _first_stamp(fd: int, pos: int, hi: int, ref_time: float | None) -> tuple[float, int, int] | None:
    """(timestamp, end of its line, start of its line) of the first stamped line starting in
    [pos, hi)."""
    reader = TimestampReader(None, ref_time)
    while pos < hi:
        data = os.pread(fd, 1 << 16, pos)
        if not data:
            return None
        cut = data.rfind(b"\n") + 1 or len(data)
        for a, b in _lines(data[:cut]):
            if pos + a >= hi:
                return None
            ts = _stamp(reader, data, a, b)
            if ts is not None:
                return ts, pos + b + 1, pos + a
        pos += cut
    return None


def _scan(fd: int, pos: int, size: int, t: float, ref_time: float | None, seen: list | None = None) -> int:
    reader = TimestampReader(None, ref_time)
    while pos < size:
        data = os.pread(fd, 1 << 20, pos)
        if not data:
            break
        cut = data.rfind(b"\n") + 1 or len(data)
        for a, b in _lines(data[:cut]):
            ts = _stamp(reader, data, a, b)
            if ts is not None and seen is not None:
                seen.append((pos + a, ts))
            if ts is not None and ts >= t:
                return pos + a
        pos += cut
    return size


SAMPLES = 32  # places spread over a file where its clock is checked before a binary search


@dataclass
class FileRange:
    """A plain file's window: bytes [lo, hi); ``search``: ``binary``, or ``in order`` where the
    clock goes back (``warning`` says where); ``context``: the bytes of the startup block before
    ``lo`` (:func:`startup_block`), read with the window; the log's first and last stamps."""

    lo: int
    hi: int
    search: str = "binary"
    warning: str | None = None
    context: tuple[int, int] | None = None
    first_ts: float | None = None
    last_ts: float | None = None

    def report(self) -> dict:
        """What the result's ``window`` says of this range (besides since/until)."""
        ctx = 0 if self.context is None else self.context[1] - self.context[0]
        return {
            "skipped_bytes": self.lo,
            "search": self.search,
            "context_bytes": ctx,
            "log_first": _ts_text(self.first_ts),
            "log_last": _ts_text(self.last_ts),
        }

    def prefix(self, fd: int) -> tuple[int, bytes] | None:
        """(offset, bytes) of the context, read from ``fd``; None when there is none."""
        if self.context is None or self.context[1] <= self.context[0]:
            return None
        a, b = self.context
        return a, os.pread(fd, b - a, a)


def _samples(fd: int, size: int, ref_time: float | None) -> list[tuple[int, float]]:
    """(offset, stamp) of the first stamped line after each of SAMPLES places, and of the last."""
    out = []
    for k in range(SAMPLES):
        pos = size * k // SAMPLES
        nl = 0 if k == 0 else _find_newline(fd, pos, size)
        if nl is None:
            continue
        found = _first_stamp(fd, nl, min(size, nl + (1 << 16)), ref_time)
        if found is not None:
            out.append((found[2], found[0]))
    tail_at = max(0, size - (1 << 16))
    tail = os.pread(fd, size - tail_at, tail_at)
    if tail_at:
        cut = tail.find(b"\n") + 1
        tail_at, tail = tail_at + cut, tail[cut:]
    last = _last_in(tail, ref_time)
    if last is not None:
        out.append((size, last))
    return out


JITTER = 5.0  # seconds a stamp may go back and the clock still count as going forward
SETTLE = 1 << 16  # bytes before an edge looked at for lines of that jitter


def _goes_back(seen: list[tuple[int, float]]) -> tuple[int, float, float] | None:
    """(offset, stamp, the stamp before it) of the first place where the stamps, in the file's
    order, go back by more than JITTER (processes writing one log print a second or two out of
    order: :func:`_settle` takes care of that at the edges); None when they never do."""
    best: tuple[int, float] | None = None
    for off, ts in sorted(seen):
        if best is not None and ts < best[1] - JITTER:
            return off, ts, best[1]
        if best is None or ts >= best[1]:
            best = (off, ts)
    return None


def _settle(fd: int, floor: int, pos: int, t: float, ref_time: float | None) -> int:
    """``pos`` (a line start found by binary search for ``t``), or the first line in the SETTLE
    bytes before it (not before ``floor``) already stamped at or after ``t``: where stamps jitter,
    reading in order would stop there."""
    a = max(floor, pos - SETTLE)
    if a >= pos:
        return pos
    data = os.pread(fd, pos - a, a)
    skip = data.find(b"\n") + 1 if a > floor else 0
    reader = TimestampReader(None, ref_time)
    for x, y in _lines(data, skip):
        ts = _stamp(reader, data, x, y)
        if ts is not None and ts >= t:
            return a + x
    return pos


def _in_order(fd: int, size: int, window: Window, ref_time: float | None) -> tuple[int, int]:
    """[start, end) of the window, the file read in order (:class:`Cutter`)."""
    cutter = Cutter(window, ref_time)
    pos = 0
    while pos < size and not cutter.done:
        data = os.pread(fd, min(1 << 20, size - pos), pos)
        if not data:
            break
        cut = data.rfind(b"\n") + 1 or len(data)
        cutter.cut(data[:cut], pos)
        pos += cut
    lo = size if cutter.first_offset is None else cutter.first_offset
    hi = pos if cutter.end_offset is None else cutter.end_offset
    return lo, max(lo, hi)


def find_range(
    fd: int, size: int, window: Window, ref_time: float | None, *, context: bool = True
) -> FileRange:
    """A plain file's bytes inside ``window`` (see the module's docstring): by binary search where
    the stamps it sees go forward, else read in order."""
    seen = _samples(fd, size, ref_time)
    first = min(seen)[1] if seen else None
    last = max(seen)[1] if seen else None
    lo = 0 if window.since is None else offset_at(fd, size, window.since, ref_time, seen=seen)
    if window.since is not None:
        lo = _settle(fd, 0, lo, window.since, ref_time)
    hi = size if window.until is None else offset_at(fd, size, window.until, ref_time, lo, seen)
    if window.until is not None:
        hi = _settle(fd, lo, hi, window.until, ref_time)
    if lo > 0:
        before = _last_in(os.pread(fd, min(lo, 1 << 16), max(0, lo - (1 << 16))), ref_time)
        if before is not None:
            seen.append((lo - 1, before))
    rng = FileRange(lo, max(lo, hi), first_ts=first, last_ts=last)
    back = _goes_back(seen)
    if back is not None:
        off, ts, prev = back
        rng.lo, rng.hi = _in_order(fd, size, window, ref_time)
        rng.search = "in order"
        rng.warning = (
            f"the log's clock goes back ({_ts_text(ts)} after {_ts_text(prev)}, near byte {off}): "
            "the window was found by reading the file in order, not by binary search"
        )
    if context and window.since is not None and 0 < rng.lo < rng.hi:
        rng.context = context_before(fd, rng.lo)
    return rng


def file_range(fd: int, size: int, window: Window, ref_time: float | None) -> tuple[int, int]:
    """[start, end) of a plain file's bytes inside ``window`` (see :func:`find_range`)."""
    rng = find_range(fd, size, window, ref_time, context=False)
    return rng.lo, rng.hi
