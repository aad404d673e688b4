"""``g`` in the log tail: what a person types (a line number, or a time of day by the log's clock)
and the kept line it names. Pure: no Textual; the log tail shows the line found."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tui.core.formats.timestamps import TimestampReader
from tui.panes.history import RawLine

HINT = "go to a line number or a time (HH:MM or HH:MM:SS, the log's clock); Enter goes, Esc closes"
_LINE = re.compile(r"^\s*(?:line\s*)?([\d,_]+)\s*$", re.IGNORECASE)
_TIME = re.compile(r"^\s*(\d{1,2}):(\d{2})(?::(\d{2}))?\s*$")
DAY = 86400


def goto(kept: Sequence[RawLine], text: str) -> tuple[int | None, str]:
    """(index in ``kept`` of the line ``text`` names, or None; the words to say about it)."""
    if m := _LINE.match(text):
        want = int(m.group(1).replace(",", "").replace("_", ""))
        numbered = [(i, r.line_no) for i, r in enumerate(kept) if r.line_no is not None]
        if not numbered:
            return None, "the log tail has no numbered lines"
        first, last = numbered[0][1], numbered[-1][1]
        for i, no in numbered:
            if no == want:
                return i, f"line {want:,}"
        return None, f"line {want:,} is not in the log tail (it keeps lines {first:,}–{last:,})"
    if m := _TIME.match(text):
        h, mi, s = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
        if h > 23 or mi > 59 or s > 59:
            return None, f"{text.strip()!r} is not a time of day"
        return _at_time(kept, h * 3600 + mi * 60 + s, text.strip())
    return None, f"{text.strip()!r}: type a line number (4001) or a time (09:21 or 09:21:40)"


def _at_time(kept: Sequence[RawLine], tod: int, shown: str) -> tuple[int | None, str]:
    """The first kept line stamped at or after ``tod`` (seconds of the day) on the newest day
    the tail reaches, or on the day before when that time is still to come on it and the day
    before is nearer to the lines kept."""
    reader = TimestampReader(ref_time=None)
    stamps = [(i, ts) for i, r in enumerate(kept) if (ts := reader.read(r.text)) is not None]
    if not stamps:
        return None, "no line of the log tail has a timestamp"
    oldest, newest = stamps[0][1], stamps[-1][1]
    target = newest - newest % DAY + tod  # naive seconds: the log's own date and time fields
    if target > newest:  # still to come on the newest day: that, or the day before (the nearer)
        if target - newest < oldest - (target - DAY):
            return None, f"{shown} is after the newest line ({_clock(newest)})"
        target -= DAY
    if target < oldest - 1:
        return None, f"{shown} is before the log tail's oldest line ({_clock(oldest)})"
    i = next(i for i, ts in stamps if ts >= target)
    return i, f"the first line at or after {shown} ({_clock(kept_ts(stamps, i))})"


def kept_ts(stamps: list[tuple[int, float]], i: int) -> float:
    return next(ts for k, ts in stamps if k == i)


def _clock(ts: float) -> str:
    s = int(ts) % DAY
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"
