"""``--since`` / ``--until``: the part of a log between two times of its own timestamps.

Times are the log's wall clock as printed (naive, like :mod:`tui.core.formats.timestamps`):
``2026-11-30 14:00``, ``2026-11-30T14:00:05``, ``2026-11-30`` (midnight), ``14:00`` (today), or
relative to now on this machine's clock: ``-2h``, ``-90m``, ``-1d12h``, ``-30s`` (:func:`parse_when`).

The rule for lines (:class:`Window`): the window starts at the first line stamped at or after
``since`` and ends before the first line after it stamped at or after ``until``. A line without a
timestamp (a traceback, an args dump, a llama.cpp line) goes with the stamped line before it;
lines before the first timestamp of the log count as earlier than any time (outside a window
with a ``since``, inside one with only an ``until``). So the window is one run of whole lines,
and a restart's startup lines stay with the time they follow.

Plain files are cut by binary search on their timestamps (:func:`find_range`: a few reads,
wherever the window is); streams (compressed files, SSH, pipes) are cut as they are read
(:class:`Cutter`), cheaply: a chunk whose stamps all lie before the window is dropped whole.

The binary search takes the log's clock to go forward, and checks it: the stamps at 32 places
spread over the file, the ones it lands on and the ones at the window's edges must not go back
in the file's order. Where they do (a restarted server on another clock, a log of two machines
appended), the file is read in order, as a stream is, so a plain file and the same file
compressed give the same window; ``search`` says ``in order`` and a warning says why. (A clock
that goes back and forward again between two of the places looked at is not seen.) Stamps a few
seconds out of order (processes writing one log) are not a clock going back: the lines just
before each edge are read to put it where reading in order would.

A window carries the context of the segment open at its start: the last startup block before it
(the restart's marker lines, the args dump and the lines up to the first metric line: its config
and rate definition) is read with it (:func:`startup_block`), and ``context_bytes`` says how much.
A window with no line in it is said with the log's first and last stamps (``log_first``,
``log_last``).
"""

from __future__ import annotations

import calendar
import os
import re
import time
from dataclasses import dataclass

from tui.core.formats.timestamps import TimestampReader
from tui.core.sources.window_context import Context, context_before

_REL = re.compile(r"-?(?:(\d+(?:\.\d+)?)d)?(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?")
_ABS = re.compile(r"(\d{4})-(\d\d)-(\d\d)(?:[ T](\d\d):(\d\d)(?::(\d\d)(?:[.,](\d{1,6}))?)?)?")
_TOD = re.compile(r"(\d\d?):(\d\d)(?::(\d\d))?")


def wall_now() -> float:
    """Now on this machine's wall clock, as the logs' naive stamps count it."""
    return float(calendar.timegm(time.localtime()))


def parse_when(text: str, now: float | None = None) -> float:
    """A ``--since``/``--until`` time (see the module's docstring); ValueError when unreadable."""
    t = text.strip()
    m = _REL.fullmatch(t)
    if m is not None and any(m.groups()):
        d, h, mi, s = (float(g) if g else 0.0 for g in m.groups())
        return (wall_now() if now is None else now) - (d * 86400 + h * 3600 + mi * 60 + s)
    m = _ABS.fullmatch(t)
    if m is not None:
        y, mo, dd, hh, mm, ss, frac = m.groups()
        try:
            base = calendar.timegm((int(y), int(mo), int(dd), int(hh or 0), int(mm or 0), int(ss or 0)))
            time.struct_time((int(y), int(mo), int(dd), 0, 0, 0, 0, 1, -1))
        except (ValueError, OverflowError):
            raise ValueError(f"{text!r} is not a valid date") from None
        if not (1 <= int(mo) <= 12 and 1 <= int(dd) <= 31 and int(hh or 0) < 24 and int(mm or 0) < 60):
            raise ValueError(f"{text!r} is not a valid date")
        return base + (int(frac) / 10 ** len(frac) if frac else 0.0)
    m = _TOD.fullmatch(t)
    if m is not None and int(m.group(1)) < 24 and int(m.group(2)) < 60:
        today = (wall_now() if now is None else now) // 86400 * 86400
        return today + int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3) or 0)
    raise ValueError(
        f"{text!r} is not a time: give 2026-11-30 14:00[:SS], 2026-11-30, 14:00 (today), or -2h / -90m / -1d"
    )


@dataclass(frozen=True)
class Window:
    since: float | None = None
    until: float | None = None

    def __bool__(self) -> bool:
        return self.since is not None or self.until is not None

    def to_dict(self) -> dict:
        from tui.core.model.records import format_ts

        return {
            "since": None if self.since is None else format_ts(self.since),
            "until": None if self.until is None else format_ts(self.until),
        }


def _lines(buf: bytes, start: int = 0):
    """(start, end) of each line of ``buf`` from ``start`` (end excludes the newline)."""
    pos, n = start, len(buf)
    while pos < n:
        end = buf.find(b"\n", pos)
        end = n if end < 0 else end
        yield pos, end
        pos = end + 1


def _stamp(reader: TimestampReader, buf: bytes, a: int, b: int) -> float | None:
    return reader.read(buf[a : min(b, a + 200)].decode("utf-8", "replace"))


class Cutter:
    """Cuts a stream of whole-line chunks to a window, chunk by chunk (:meth:`cut`); after the
    window, :attr:`done` is set (the reader may stop). ``ref_time``: the year of vLLM's stamps.
    ``context``: the window's first bytes are preceded by the last startup block before it
    (:func:`startup_block`)."""

    def __init__(self, window: Window, ref_time: float | None, *, context: bool = False) -> None:
        self.window = window
        self.ref_time = ref_time
        self.reader = TimestampReader(None, ref_time)
        self.inside = window.since is None
        self.done = False
        self.skipped = 0  # bytes before the window
        self.first_offset: int | None = 0 if self.inside else None  # where the window starts
        self.end_offset: int | None = None  # where it ended (once :attr:`done`)
        self.first_ts: float | None = None  # the first and last stamps of the chunks looked at
        self.last_ts: float | None = None
        self._prev_last: float | None = None
        self._context = Context() if context and not self.inside else None
        self.context_bytes = 0

    def _ends(self, buf: bytes) -> tuple[float | None, float | None]:
        """The first and the last timestamp in ``buf`` (fresh readers: cheap, from each end)."""
        first = _first_in(buf, self.ref_time)
        last = _last_in(buf, self.ref_time)
        if first is not None and self.first_ts is None:
            self.first_ts = first
        if last is not None:
            self.last_ts = last
        return first, last

    def _before(self, buf: bytes) -> bool:
        """Every stamp of ``buf`` is before the window (or it has none), by its ends: they are in
        order, and after the last stamp of the chunk before."""
        first, last = self._ends(buf)
        prev, self._prev_last = self._prev_last, last if last is not None else self._prev_last
        if last is None:
            return True
        since = self.window.since
        assert since is not None
        ordered = first is not None and first <= last and (prev is None or prev <= first)
        return last < since and ordered

    def cut(self, buf: bytes, offset: int = 0) -> bytes:
        """The part of ``buf`` (whole lines, at stream ``offset``) inside the window."""
        if self.done:
            return b""
        since, until = self.window.since, self.window.until
        if not self.inside:
            if self._before(buf):
                self.skipped += len(buf)
                if self._context is not None:
                    self._context.add(buf)
                return b""
        elif until is None:
            self._ends(buf)
            return buf
        else:
            first, last = self._ends(buf)
            if last is not None and last < until and first is not None and first <= last:
                return buf
        lo, hi = (None, len(buf)) if not self.inside else (0, len(buf))
        for a, b in _lines(buf):
            ts = _stamp(self.reader, buf, a, b)
            if ts is None:
                continue
            if not self.inside and ts >= since:  # type: ignore[operator]
                self.inside, lo = True, a
                self.first_offset = offset + a
                self.skipped += a
            if self.inside and until is not None and ts >= until:
                hi, self.done = a, True
                self.end_offset = offset + a
                break
        if lo is None:
            self.skipped += len(buf)
            if self._context is not None:
                self._context.add(buf)
            return b""
        if self._context is not None:
            self._context.add(buf[:lo])
            head, self._context = self._context.text() if hi > lo else b"", None
            self.context_bytes = len(head)
            return head + buf[lo:hi]
        return buf[lo:hi]

    def report(self) -> dict:
        """What the result's ``window`` says of this cut (besides since/until)."""
        return {
            "skipped_bytes": self.skipped,
            "search": "stream",
            "context_bytes": self.context_bytes,
            "log_first": _ts_text(self.first_ts),
            "log_last": None if self.done else _ts_text(self.last_ts),  # read no further than the window
        }


def _ts_text(ts: float | None) -> str | None:
    from tui.core.model.records import format_ts

    return None if ts is None else format_ts(ts)


def _first_in(buf: bytes, ref_time: float | None) -> float | None:
    probe = TimestampReader(None, ref_time)
    for a, b in _lines(buf):
        ts = _stamp(probe, buf, a, b)
        if ts is not None:
            return ts
        if a > 1 << 16:  # a chunk without a stamp near its start: taken as unstamped there
            return None
    return None


def _last_in(buf: bytes, ref_time: float | None) -> float | None:
    """The last timestamp in ``buf`` (from the end back)."""
    end = len(buf)
    probe = TimestampReader(None, ref_time)
    while end > 0:
        start = buf.rfind(b"\n", 0, end - 1) + 1 if end > 1 else 0
        ts = _stamp(probe, buf, start, end)
        if ts is not None:
            return ts
        if start == 0:
            return None
        end = start
    return None


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
