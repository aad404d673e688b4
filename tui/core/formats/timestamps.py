"""Timestamps in line prefixes, as naive wall-clock seconds.

The servers print local time with no zone (docs/formats.md, "Line prefixes"), so a timestamp is
kept as ``calendar.timegm`` of the printed fields: comparable within one source, never converted.

Forms read (at the start of the line, after markdown / prose it may also follow a ``[``):
* SGLang ``[2026-01-02 03:04:05 TP0]`` and the 2024 time-only ``[04:40:55 TP0]``;
* generic ``2025-12-04 20:35:53[,.mmm]`` (forks, custom logging configs);
* vLLM ``INFO 05-19 10:30:33[.mmm]`` with no year: taken from a reference time the reader is
  given (a file's mtime; now, for a live source), else no timestamp (see :class:`TimestampReader`);
* docker ``logs -t`` RFC3339 ``2026-05-12T07:51:39.301802920Z`` (preferred when present).

llama.cpp's prefix ``0.06.895.980 I`` is time elapsed since the server started
(minutes.seconds.ms.us), not a date: :meth:`TimestampReader.elapsed` reads it apart.
"""

from __future__ import annotations

import calendar
import re
import time
from typing import Literal

_DOCKER = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:Z|[+-]\d\d:?\d\d)? ")
_FULL = re.compile(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,6}))?")
_YEARLESS = re.compile(
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL|WARN) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?"
)
_TIME_ONLY = re.compile(r"\[(\d\d):(\d\d):(\d\d)(?:[ \]])")
_LLAMA = re.compile(r"(\d+)\.(\d\d)\.(\d{3})\.(\d{3}) [IWEDT] ")

_DAY = 86400.0


def _frac(digits: str | None) -> float:
    return int(digits) / 10 ** len(digits) if digits else 0.0


class TimestampReader:
    """Reads the timestamp of each line of one source, keeping the state that needs:

    * vLLM prints no year. The first one is ``year`` when given, else the year of ``ref_time``
      (a file's mtime; ``"now"``, the default, for a live source), or the year before when the
      month-day would be more than a day after ``ref_time``; then carried forward: a month that
      goes backwards (December → January) moves to the next year. ``ref_time=None`` (a whole
      stream of unknown age) gives year-less stamps no timestamp: never a guessed year.
    * 2024 SGLang prints the time only: days are counted from 1970-01-01, and a time that goes
      back by more than 12 hours is taken as the next day.
    """

    __slots__ = ("_year", "_ref", "_last_md", "_day_base", "_last_tod", "_cache")

    def __init__(self, year: int | None = None, ref_time: float | Literal["now"] | None = "now") -> None:
        self._year = year
        self._ref = ref_time
        self._last_md: tuple[int, int] | None = None
        self._day_base = 0.0
        self._last_tod: float | None = None
        self._cache: dict[str, float] = {}

    def read(self, line: str) -> float | None:
        # The common SGLang case first, without a regex: "[YYYY-MM-DD HH:MM:SS".
        if line[:1] == "[" and line[5:6] == "-" and line[11:12] == " " and line[20:21] in (" ", "]"):
            base = self._cache.get(line[1:11])
            t = line[12:20]
            if base is not None and t[2] == ":" and t[5] == ":" and t.isascii():
                try:
                    h, mi, sec = int(t[0:2]), int(t[3:5]), int(t[6:8])
                except ValueError:
                    pass
                else:
                    if h < 24 and mi < 60 and sec <= 60:
                        return base + h * 3600 + mi * 60 + sec
        head = line[:160]
        m = _DOCKER.match(head)
        if m:
            return self._full(m)
        # SGLang: "[YYYY-MM-DD HH:MM:SS ..." possibly after prose ("sever logs: [2025-...").
        i = head.find("[")
        if i >= 0 and head[i + 1 : i + 3].isdigit():
            if head[i + 5 : i + 6] == "-":
                m = _FULL.match(head, i + 1)
                if m:
                    return self._full(m)
            m = _TIME_ONLY.match(head, i)
            if m:
                return self._time_only(m)
        m = _FULL.search(head)
        if m and (m.start() == 0 or not head[m.start() - 1].isdigit()):
            return self._full(m)
        m = _YEARLESS.search(head)
        if m:
            return self._yearless(m)
        return None

    @staticmethod
    def elapsed(line: str) -> float | None:
        """llama.cpp's ``0.16.519.195 I`` prefix: seconds since the server started."""
        m = _LLAMA.match(line[:40].lstrip())
        if m is None:
            return None
        mi, s, ms, us = (int(g) for g in m.groups())
        return mi * 60 + s + ms / 1e3 + us / 1e6

    def set_reference(self, ref_time: float) -> None:
        """Where year-less stamps take their year from (a local file's mtime, given when it is
        opened); only until the first such stamp fixed the year."""
        if self._year is None and self._last_md is None:
            self._ref = ref_time

    @property
    def year_hint(self) -> int:
        """The year vLLM stamps are most likely read with (for the fast path, which checks it)."""
        if self._year is not None:
            return self._year
        ref = self._reference()
        return time.gmtime(ref).tm_year if ref is not None else 1970

    def _reference(self) -> float | None:
        ref = self._ref
        return time.time() if isinstance(ref, str) else ref

    def _first_year(self, mo: int, d: int, h: int, mi: int, s: int) -> int | None:
        ref = self._reference()
        if ref is None:
            return None
        year = time.gmtime(ref).tm_year
        try:
            guess = calendar.timegm((year, mo, d, h, mi, s, 0, 0, 0))
        except (ValueError, OverflowError):
            return None
        return year - 1 if guess > ref + _DAY else year

    def settle_yearless(
        self, first: tuple[int, int, int, int, int], last_md: tuple[int, int], year: int
    ) -> bool | None:
        """The fast path read a run of year-less stamps (no new year inside it) with ``year``.

        True: that is the year this reader gives them; its state is advanced as if it had read
        them. None: this reader gives them no timestamp (no year known). False: another year
        (the caller reads those lines with the line parser)."""
        if self._year is None:
            y = self._first_year(*first)
            if y is None:
                return None
        else:
            y = self._year
            if self._last_md is not None and first[:2] < self._last_md and self._last_md[0] - first[0] >= 6:
                y += 1
        if y != year:
            return False
        self._year = y
        self._last_md = last_md
        return True

    def _full(self, m: re.Match[str]) -> float | None:
        date = m.group(0)[:10]
        if not date[:4].isdigit():  # "Z"-less docker forms start differently; key on the digits
            date = f"{m.group(1)}-{m.group(2)}-{m.group(3)}"
        base = self._cache.get(date)
        if base is None:
            try:
                y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
                if not (1 <= mo <= 12 and 1 <= d <= 31):
                    return None
                base = float(calendar.timegm((y, mo, d, 0, 0, 0, 0, 0, 0)))
            except (ValueError, OverflowError):
                return None
            if len(self._cache) > 1024:
                self._cache.clear()
            self._cache[date] = base
        h, mi, s = int(m.group(4)), int(m.group(5)), int(m.group(6))
        if h > 23 or mi > 59 or s > 60:
            return None
        return base + h * 3600 + mi * 60 + s + _frac(m.group(7))

    def _yearless(self, m: re.Match[str]) -> float | None:
        mo, d, h, mi, s = (int(g) for g in m.groups()[:5])
        if not (1 <= mo <= 12 and 1 <= d <= 31) or h > 23 or mi > 59 or s > 60:
            return None
        if self._year is None:
            year = self._first_year(mo, d, h, mi, s)
            if year is None:
                return None  # no year known: no timestamp rather than a guessed year
            self._year = year
        elif self._last_md is not None and (mo, d) < self._last_md and self._last_md[0] - mo >= 6:
            self._year += 1  # December -> January
        self._last_md = (mo, d)
        try:
            return calendar.timegm((self._year, mo, d, h, mi, s, 0, 0, 0)) + _frac(m.group(6))
        except (ValueError, OverflowError):
            return None

    def _time_only(self, m: re.Match[str]) -> float | None:
        h, mi, s = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if h > 23 or mi > 59 or s > 60:
            return None
        tod = h * 3600.0 + mi * 60 + s
        if self._last_tod is not None and tod < self._last_tod - 12 * 3600:
            self._day_base += _DAY
        self._last_tod = tod
        return self._day_base + tod
