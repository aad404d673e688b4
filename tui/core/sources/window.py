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

Plain files are cut by binary search on their timestamps (:func:`offset_at`: a few reads,
wherever the window is); streams (compressed files, SSH, pipes) are cut as they are read
(:class:`Cutter`), cheaply: a chunk whose last stamp is before the window is dropped whole.
The binary search takes the log's clock to go forward; a clock that goes back (a restarted
server on another clock) is read as a stream would read it only in the stream case.
"""

from __future__ import annotations

import calendar
import os
import re
import time
from dataclasses import dataclass

from tui.core.formats.timestamps import TimestampReader

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
    window, :attr:`done` is set (the reader may stop). ``ref_time``: the year of vLLM's stamps."""

    def __init__(self, window: Window, ref_time: float | None) -> None:
        self.window = window
        self.ref_time = ref_time
        self.reader = TimestampReader(None, ref_time)
        self.inside = window.since is None
        self.done = False
        self.skipped = 0  # bytes before the window
        self.first_offset: int | None = 0 if self.inside else None  # where the window starts
        self.end_offset: int | None = None  # where it ended (once :attr:`done`)

    def _last_stamp(self, buf: bytes) -> float | None:
        """The last timestamp in ``buf`` (a fresh reader: cheap, from the end back)."""
        end = len(buf)
        probe = TimestampReader(None, self.ref_time)
        while end > 0:
            start = buf.rfind(b"\n", 0, end - 1) + 1 if end > 1 else 0
            ts = _stamp(probe, buf, start, end)
            if ts is not None:
                return ts
            if start == 0:
                return None
            end = start
        return None

    def cut(self, buf: bytes, offset: int = 0) -> bytes:
        """The part of ``buf`` (whole lines, at stream ``offset``) inside the window."""
        if self.done:
            return b""
        since, until = self.window.since, self.window.until
        if not self.inside:
            last = self._last_stamp(buf)
            if last is None or last < since:  # type: ignore[operator]
                self.skipped += len(buf)
                return b""
        elif until is None:
            return buf
        else:
            last = self._last_stamp(buf)
            if last is not None and last < until:
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
            return b""
        return buf[lo:hi]


def offset_at(fd: int, size: int, t: float, ref_time: float | None, lo: int = 0) -> int:
    """The offset of the first line at or after ``lo`` stamped at or after ``t`` in the plain file
    ``fd`` of ``size`` bytes (``size`` when there is none), found by binary search: the stamps
    are taken to go forward. ``lo`` is a line start."""
    hi = size
    step = 1 << 16
    while hi - lo > step:
        mid = (lo + hi) // 2
        nl = _find_newline(fd, mid, hi)
        if nl is None:
            hi = mid
            continue
        found = _first_stamp(fd, nl, hi, ref_time)
        if found is None or found[0] >= t:
            hi = mid
        else:
            lo = found[1]  # the end of that stamped line: before the answer
    return _scan(fd, lo, size, t, ref_time)


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


def _first_stamp(fd: int, pos: int, hi: int, ref_time: float | None) -> tuple[float, int] | None:
    """(timestamp, end of its line) of the first stamped line starting in [pos, hi)."""
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
                return ts, pos + b + 1
        pos += cut
    return None


def _scan(fd: int, pos: int, size: int, t: float, ref_time: float | None) -> int:
    reader = TimestampReader(None, ref_time)
    while pos < size:
        data = os.pread(fd, 1 << 20, pos)
        if not data:
            break
        cut = data.rfind(b"\n") + 1 or len(data)
        for a, b in _lines(data[:cut]):
            ts = _stamp(reader, data, a, b)
            if ts is not None and ts >= t:
                return pos + a
        pos += cut
    return size


def file_range(fd: int, size: int, window: Window, ref_time: float | None) -> tuple[int, int]:
    """[start, end) of a plain file's bytes inside ``window`` (see the module's docstring)."""
    lo = 0 if window.since is None else offset_at(fd, size, window.since, ref_time)
    hi = size if window.until is None else offset_at(fd, size, window.until, ref_time, lo)
    return lo, max(lo, hi)
