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

Plain files are cut by binary search on their timestamps
(:func:`tui.core.sources.window_search.find_range`: a few reads,
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
import re
import time
from dataclasses import dataclass

from tui.core.formats.timestamps import TimestampReader
from tui.core.sources.window_context import Context

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
