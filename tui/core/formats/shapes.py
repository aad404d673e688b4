"""The grammar's building blocks: line shapes as token sequences, the regular expressions the
Python readers compile from them, and the group roles those readers interpret.

The families declare their shapes as data (``family.toml``, :mod:`tui.core.formats.family_data`
turns each part into these tokens); the one grammar that assembles them is
:mod:`tui.core.formats.grammar`; the native scanner reads the same tokens as a program
(:mod:`tui.core.formats.shape_program`). A token sequence means the same to both: literal text
and choices match as written, a field's number is ``\\d+`` / ``\\d+\\.\\d+`` / a percentage / a
list of decimals joined by ``", "``, an optional group is all or nothing, a lazy character run
stops at the first place the next text matches.
"""

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
class Chars:
    """A run of ``cls`` (a regex class body, ASCII), ``lo`` to ``hi`` long (None: no bound);
    ``lazy``: as short as the text after it allows."""

    cls: str
    lo: int = 1
    hi: int | None = None
    lazy: bool = False


@dataclass(frozen=True)
class Clock:
    """A time stamp of ``kind`` (date, yearless, elapsed) in ``fmt`` (``%Y-%m-%d %H:%M:%S``)."""

    kind: str
    fmt: str


@dataclass(frozen=True)
class Capture:
    """The text ``parts`` span, as ``name`` (``rank`` or ``process``)."""

    name: str
    parts: tuple[Token, ...]


@dataclass(frozen=True)
class Repeat:
    """``parts`` zero or more times."""

    parts: tuple[Token, ...]


@dataclass(frozen=True)
class Opt:
    """An optional group of tokens (all or nothing)."""

    parts: tuple[Token, ...]


Token = Lit | Field | OneOf | Spaces | Chars | Clock | Capture | Repeat | Opt


@dataclass(frozen=True)
class Shape:
    family: str
    kind: str  # Record.kind, or a kind a family pairs with a record (vLLM's "engine")
    prefix: tuple[Token, ...]  # the line's start, up to the lead (or the anchor)
    anchor: str  # one of the grammar's anchors: the text the scanners find the line by
    body: tuple[Token, ...]  # after the anchor, to the end of the line
    lead: tuple[Token, ...] = ()  # between the prefix and the anchor


# what each group of a shape's pattern is: ("field", name, kind), ("choice",), ("capture", name),
# ("clock", kind, directive)
Role = tuple[str, ...]

_FIELD_RE = {
    INT: r"(\d+)",
    FLOAT: r"(\d+\.\d+)",
    PERCENT: r"(\d+\.\d+)%",
    "list": r"(\d+\.\d+(?:, \d+\.\d+)*)",
}
_CLOCK_RE = {"Y": r"(\d{4})", "N": r"(\d+)", "L": r"(\d{3})", "U": r"(\d{3})", "f": r"(?:\.(\d{1,6}))?"}


def clock_regex(c: Clock, roles: list[Role]) -> str:
    out, i, f = [], 0, c.fmt
    while i < len(f):
        if f[i] == "%":
            d = f[i + 1]
            out.append(_CLOCK_RE.get(d, r"(\d\d)"))
            roles.append(("clock", c.kind, d))
            i += 2
        else:
            out.append(re.escape(f[i]))
            i += 1
    return "".join(out)


def _token_re(t: Token, roles: list[Role], choices: bool = False) -> str:
    if isinstance(t, Lit):
        return re.escape(t.text)
    if isinstance(t, OneOf):
        alternatives = "|".join(map(re.escape, t.options))
        if choices:  # a group of its own
            roles.append(("choice",))
            return "(" + alternatives + ")"
        return "(?:" + alternatives + ")"
    if isinstance(t, Spaces):
        return " *"
    if isinstance(t, Chars):
        bound = "{%d,%s}" % (t.lo, "" if t.hi is None else t.hi)
        return "[" + t.cls + "]" + bound + ("?" if t.lazy else "")
    if isinstance(t, Clock):
        return clock_regex(t, roles)
    if isinstance(t, Capture):
        roles.append(("capture", t.name))
        inner: list[Role] = []
        body = "".join(_token_re(p, inner, choices) for p in t.parts)
        roles.extend(inner)
        return "(" + body + ")"
    if isinstance(t, Repeat):
        return "(?:" + "".join(_token_re(p, roles, choices) for p in t.parts) + ")*"
    if isinstance(t, Opt):
        return "(?:" + "".join(_token_re(p, roles, choices) for p in t.parts) + ")?"
    roles.append(("field", t.name or "", t.kind))
    return _FIELD_RE[t.kind]


def text_regex(shape: Shape) -> re.Pattern[str]:
    """A str pattern of ``shape`` from its anchor to the end of the line (``match`` it at the
    anchor in a cleaned line): every field and every choice (:class:`OneOf`) is a group, in
    order. For a line parser's fast path over the same shape the scanners read."""
    roles: list[Role] = []
    body = "".join(_token_re(t, roles, choices=True) for t in shape.body)
    return re.compile(re.escape(shape.anchor) + body + "$")


def line_pattern(shape: Shape) -> tuple[str, list[Role]]:
    """The pattern of a whole line of ``shape`` without its line end, and the role of each of its
    groups, in order."""
    roles: list[Role] = []
    parts = [_token_re(t, roles) for t in (*shape.prefix, *shape.lead)]
    body = "".join(_token_re(t, roles) for t in shape.body)
    return "".join(parts) + re.escape(shape.anchor) + body, roles


def regex(shape: Shape) -> tuple[re.Pattern[bytes], list[Role]]:
    """A bytes pattern for a whole line of ``shape`` (``match`` it at the line start; it takes
    the newline) and the role of each group."""
    pat, roles = line_pattern(shape)
    return re.compile((pat + r"\r?\n").encode()), roles
