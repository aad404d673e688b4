"""The plug-in of a family of data only: its lines are read by its declared shapes.

A family whose ``family.toml`` names no ``plugin`` gets a :class:`DeclaredFormat`: a line
holding one of its anchors is matched, whole, against the shapes of that anchor (prefix, lead,
anchor and body, as :func:`tui.core.formats.shapes.line_pattern` writes them); each
declared number fills the record field its column names (``percent``: the printed percentage as
a fraction, rounded to the printed digits; ``list``: the per-position values). A line with the
anchor that fits no shape is :class:`Malformed` (said, never guessed). The timestamp is the line
parser's (any prefix it knows, RFC 3339 included).
"""

from __future__ import annotations

import re
from typing import Any

from tui.core.formats.family_data import FamilyData, FamilyDataError
from tui.core.formats.plugin import NOT_MINE, Line, PrintedRate
from tui.core.formats.shapes import line_pattern
from tui.core.model.records import RATE_DRAFTS, Malformed, Record

_INT_FIELDS = {"accepted", "drafted", "running_req", "tokens", "queue_req"}
_RATES = {"drafts": RATE_DRAFTS}


def percent(text: str) -> float:
    """``62.4`` (printed ``62.4%``) -> 0.624, the double nearest the printed decimal / 100."""
    dec = len(text) - text.find(".") - 1
    return round(float(text) / 100.0, dec + 2)


def convert(syntax: str, text: str) -> Any:
    if syntax == "int":
        return int(text)
    if syntax == "percent":
        return percent(text)
    if syntax == "list":
        return tuple(float(x) for x in text.split(", "))
    return float(text)


class DeclaredFormat(PrintedRate):
    """A family read by its declared shapes only."""

    def __init__(self, data: FamilyData) -> None:
        super().__init__(data)
        self._shapes: list[tuple[str, str, re.Pattern[str], list[tuple[int, str, str]], str | None]] = []
        fields = set(Record.__slots__)
        for sd in data.shapes:
            if sd.pairs_with is not None:
                raise FamilyDataError(f"{data.name}: pairs_with needs a plug-in (code) to pair the lines")
            shape = sd.shape(data)
            pat, roles = line_pattern(shape)
            cols = []
            for g, role in enumerate(roles, 1):
                if role[0] != "field" or not role[1]:
                    continue
                if role[1] not in fields:
                    raise FamilyDataError(f"{data.name}: shape {sd.kind}: no record field named {role[1]!r}")
                cols.append((g, role[1], role[2]))
            rate = _RATES[sd.rate] if sd.rate else None
            self._shapes.append((shape.anchor, sd.kind, re.compile(pat + r"\r?$"), cols, rate))

    def parse(self, state: Any, line: Line) -> Any:
        text = line.text
        mine = False
        for anchor, kind, pattern, cols, rate in self._shapes:
            if anchor not in text:
                continue
            mine = True
            m = pattern.match(text)
            if m is None:
                continue
            rec = Record(line.source, line.line_no, line.offset, self.name, kind, line.raw)
            for group, name, syntax in cols:
                value = m.group(group)
                if value is not None:
                    v = convert(syntax, value)
                    setattr(rec, name, int(v) if name in _INT_FIELDS and syntax == "int" else v)
            rec.rate_definition = rate if rec.accept_rate is not None else None
            return rec
        if mine:
            return Malformed(
                line.source,
                line.line_no,
                line.offset,
                f"a {self.display} line that fits none of its shapes",
                line.raw,
            )
        return NOT_MINE
