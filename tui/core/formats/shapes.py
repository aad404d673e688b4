"""The grammar's building blocks: line shapes as token sequences, and the regular expressions the
Python scanner compiles from them (the families' shapes are in ``<family>/grammar.py``; the one
grammar that assembles them is :mod:`tui.core.formats.grammar`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

INT, FLOAT, PERCENT, BOOL = "int", "float", "percent", "bool"


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class Field:
    """A value: ``int`` (``\\d+``), ``float`` (``\\d+\\.\\d+``), ``percent`` (float then ``%``),
    ``list`` (floats joined by ``", "``); ``name`` None = read but not kept."""

    kind: str
    name: str | None = None


@dataclass(frozen=True)
class OneOf:
    options: tuple[str, ...]


@dataclass(frozen=True)
class Spaces:
    """Any number of spaces (llama.cpp pads its numbers)."""


@dataclass(frozen=True)
class Opt:
    """An optional group of tokens (all or nothing)."""

    parts: tuple[Lit | Field | OneOf | Spaces, ...]


Token = Lit | Field | OneOf | Spaces | Opt


@dataclass(frozen=True)
class Prefix:
    """What a family's lines start with, as a regex: ``groups`` capturing groups come first."""

    regex: str
    groups: int


@dataclass(frozen=True)
class Shape:
    family: str
    kind: str  # Record.kind, or "engine" for the vLLM stats line a spec line pairs with
    prefix: Prefix  # the line's start, up to the text before the anchor (or ``lead``)
    anchor: str  # one of the grammar's anchors: the text the scanners find the line by
    body: tuple[Token, ...]  # after the anchor, to the end of the line
    lead: tuple[Token, ...] = ()  # between the prefix and the anchor
    tail: str = ""  # regex of what may close the line (before an optional "\r")


_FIELD_RE = {
    INT: r"(\d+)",
    FLOAT: r"(\d+\.\d+)",
    PERCENT: r"(\d+\.\d+)%",
    "list": r"(\d+\.\d+(?:, \d+\.\d+)*)",
}


def _token_re(t: Token, names: list[str | None], choices: bool = False) -> str:
    if isinstance(t, Lit):
        return re.escape(t.text)
    if isinstance(t, OneOf):
        alternatives = "|".join(map(re.escape, t.options))
        if choices:  # a group of its own, named None
            names.append(None)
            return "(" + alternatives + ")"
        return "(?:" + alternatives + ")"
    if isinstance(t, Spaces):
        return " *"
    if isinstance(t, Opt):
        return "(?:" + "".join(_token_re(p, names, choices) for p in t.parts) + ")?"
    names.append(t.name)
    return _FIELD_RE[t.kind]


def text_regex(shape: Shape) -> re.Pattern[str]:
    """A str pattern of ``shape`` from its anchor to the end of the line (``match`` it at the
    anchor in a cleaned line): every field and every choice (:class:`OneOf`) is a group, in
    order. For a line parser's fast path over the same shape the scanners read."""
    names: list[str | None] = []
    body = "".join(_token_re(t, names, choices=True) for t in shape.body)
    return re.compile(re.escape(shape.anchor) + body + shape.tail + "$")


def line_pattern(shape: Shape) -> tuple[str, list[str | None]]:
    """The pattern of a whole line of ``shape`` without its line end, and the field name of each
    group after the prefix groups."""
    names: list[str | None] = []
    lead = "".join(_token_re(t, names) for t in shape.lead)
    body = "".join(_token_re(t, names) for t in shape.body)
    return shape.prefix.regex + lead + re.escape(shape.anchor) + body + shape.tail, names


def regex(shape: Shape) -> tuple[re.Pattern[bytes], list[str | None]]:
    """A bytes pattern for a whole line of ``shape`` (``match`` it at the line start; it takes
    the newline) and the field name of each group after the prefix groups."""
    pat, names = line_pattern(shape)
    return re.compile((pat + r"\r?\n").encode()), names
