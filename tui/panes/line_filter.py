"""The log tail's filter (pure Python): a text (case-insensitive substring) or, with the ``re:``
prefix, a regular expression (case-insensitive, searched anywhere in the line). An invalid
expression is refused with a message that says why; the filter in force stays."""

from __future__ import annotations

import re
from dataclasses import dataclass

REGEX_PREFIX = "re:"


@dataclass(frozen=True)
class LineFilter:
    text: str = ""  # as typed ("" : every line)
    pattern: re.Pattern[str] | None = None  # the compiled expression of a ``re:`` filter

    @property
    def regex(self) -> bool:
        return self.pattern is not None

    def matches(self, line: str) -> bool:
        if not self.text:
            return True
        if self.pattern is not None:
            return self.pattern.search(line) is not None
        return self.text.lower() in line.lower()

    def describe(self) -> str:
        """The words for the tail's title: the text, or ``regex EXPR``."""
        if self.pattern is not None:
            return f"regex {self.pattern.pattern}"
        return self.text or "every line"

    def notice(self) -> str:
        """The words for the notification when it is set."""
        if not self.text:
            return "log tail: every line"
        if self.pattern is not None:
            return f"log tail: only lines matching the regular expression {self.pattern.pattern}"
        return f"log tail: only lines containing {self.text!r}"


def parse_filter(typed: str) -> tuple[LineFilter | None, str]:
    """(the filter, "") for what was typed, or (None, why) when a ``re:`` expression is invalid."""
    text = typed.strip()
    if not text.startswith(REGEX_PREFIX):
        return LineFilter(text), ""
    expr = text[len(REGEX_PREFIX) :].strip()
    if not expr:
        return LineFilter(), ""
    try:
        return LineFilter(text, re.compile(expr, re.IGNORECASE)), ""
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        return None, f"invalid regular expression {expr!r}: {exc.msg}{where}"
