"""How long ago the last line was written: by the log's own clock when it can be trusted.

The servers print local time with no zone, and the parser keeps a timestamp as
``calendar.timegm`` of the printed fields (naive seconds). The local wall clock is converted the
same way (:func:`local_naive`: ``timegm(localtime(time.time()))``), so the two compare directly.

When the log's clock is used
    The newest batch of lines holds a line with a full date (a time of day alone, or llama.cpp's
    time since start, is not a wall clock), and the clocks agree: no line is stamped more than
    :data:`TOLERANCE` seconds in the future, and a line written while it was being followed (past
    the file's size when it was opened, or after a truncation / rotation / switch; for sources
    with no size, more than :data:`BACKLOG_S` seconds after opening) is stamped within
    :data:`TOLERANCE` seconds of its arrival. A line of the backlog (an old file read at open) may
    be as old as it says: that is the point ("last line 9 min ago, by the log's clock").

Otherwise the age counts from the line's arrival, and when the clocks disagree (another time
zone, a wrong server clock) :attr:`LogClock.skew` says by how much.
"""

from __future__ import annotations

import calendar
import time

from tui.core.formats.timestamps import TimestampReader
from tui.core.sources.base import LineBatch

WALL_MIN = float(calendar.timegm((2000, 1, 1, 0, 0, 0, 0, 0, 0)))  # earlier: not a date and time
TOLERANCE = 120.0  # seconds between a live line's stamp and its arrival before the clocks disagree
BACKLOG_S = 2.0  # sources with no size: lines this soon after opening are the backlog
SCAN = 32  # lines looked at, from the end of a batch, for the newest stamp


def local_naive(wall: float) -> float:
    """``wall`` (``time.time()`` seconds) as the logs print it: the local time's fields, timegm'd."""
    return calendar.timegm(time.localtime(wall)) + (wall % 1.0)


def duration(seconds: float) -> str:
    """Seconds (rounded) under 2 min; above, whole minutes, hours or days (rounded down, as a
    clock reads: 9 min 59 s is "9 min")."""
    s = max(0.0, seconds)
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{int(s // 60)} min"
    if s < 172800:
        return f"{int(s // 3600)} h"
    return f"{int(s // 86400)} d"


class LogClock:
    """The newest line's own timestamp and whether the log's clock agrees with ours."""

    def __init__(self) -> None:
        self._reader = TimestampReader()
        self.last_ts: float | None = None  # naive seconds of the newest stamped line of the newest batch
        self.skew: float | None = None  # local − log seconds, when live lines showed the clocks disagree
        self._open_size: int | None = None
        self._opened: float | None = None  # time.monotonic() of the opening
        self._changed = False  # a file change since the opening: every line after it is new

    def opened(self, size: int | None, mono: float) -> None:
        """The source opened (or re-opened) its file; ``size``: its size then, when known."""
        self._open_size = size if isinstance(size, int) else None
        self._opened = mono  # after a file change, every line stays new (the file came since)

    def file_changed(self) -> None:
        """Truncated, rotated or switched: the lines that follow were written after it."""
        self._changed = True

    def observe(self, batch: LineBatch, wall: float, mono: float) -> None:
        """A batch arrived at ``wall`` (time.time()) / ``mono`` (time.monotonic())."""
        self.last_ts = None
        if batch.kind != "log" or not batch.lines:
            return
        ts = None
        read = self._reader.read
        for line in reversed(batch.lines[-SCAN:]):
            ts = read(line)
            if ts is not None:
                break
        if ts is None or ts < WALL_MIN:
            return
        self.last_ts = ts
        lag = local_naive(wall) - ts
        if lag < -TOLERANCE:  # stamped in the future
            self.skew = lag
        elif self._live(batch, mono):
            self.skew = lag if lag > TOLERANCE else None

    def _live(self, batch: LineBatch, mono: float) -> bool:
        if self._changed:
            return True
        if self._open_size is not None:
            return bool(batch.offsets) and batch.offsets[-1] >= self._open_size
        return self._opened is not None and mono - self._opened > BACKLOG_S

    def age(self, wall: float) -> float | None:
        """Seconds since the newest line was written, by the log's clock; None when it has no
        usable stamp or the clocks disagree."""
        if self.last_ts is None or self.skew is not None:
            return None
        return max(0.0, local_naive(wall) - self.last_ts)
