"""The declared parts of a family's shapes as the readers take them: grammar tokens
(:mod:`tui.core.formats.shapes`) and, from those, the program the native scanner interprets.

The program is a flat list of ops, each ``(code, a, b, text)``; a group op (optional, repeat,
capture) says in ``a`` how many ops after it are its own; a number's op carries the text right
before it (matched first: one op instead of two). It is handed to ``_fastscan.configure``
once; the C side knows the op codes below and nothing of any family.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tui.core.formats.shapes import (
    Capture,
    Chars,
    Clock,
    Field,
    Lit,
    OneOf,
    Opt,
    Repeat,
    Spaces,
    Token,
)

if TYPE_CHECKING:
    from tui.core.formats.family_data import Part

# op codes (the C side's enum, _fastscan.c)
LIT, CHOICE, SPACES, NUM, LIST, CHARS, CLOCK, OPT, REPEAT, CAPTURE = range(10)
SYNTAX = {"int": 0, "float": 1, "percent": 2}
CHAR_CLASS = {  # character classes of a ``chars`` part (ASCII, as the scanners read bytes)
    "digit": "0-9",
    "upper": "A-Z",
    "upper_underscore": "A-Z_",
    "word": "A-Za-z0-9_",
    "word_space": "A-Za-z0-9_ ",
    "word_dot": "A-Za-z0-9_.",
}
CHAR_CLASSES = tuple(CHAR_CLASS.values())  # in the C side's order
CLOCK_KINDS = ("date", "yearless", "elapsed")
CAPTURES = ("rank", "process")
NO_COLUMN = -1

Op = tuple[int, int, int, bytes]


def tokens_of(parts: Sequence[Part]) -> tuple[Token, ...]:
    """The grammar tokens of declared parts, in order."""
    out: list[Token] = []
    for p in parts:
        if isinstance(p.optional, list):
            out.append(Opt(tokens_of(p.optional)))
            continue
        one: list[Token] = []
        if p.text is not None:
            one.append(Lit(p.text) if isinstance(p.text, str) else OneOf(tuple(p.text)))
        elif p.spaces:
            one.append(Spaces())
        elif p.chars is not None:
            one.append(Chars(CHAR_CLASS[p.chars], p.min, p.max, p.lazy))
        elif p.clock is not None:
            one.append(Clock(p.clock, p.format or ""))
        elif p.capture is not None:
            one.append(Capture(p.capture, tokens_of(p.parts or [])))
        elif p.repeat is not None:
            one.append(Repeat(tokens_of(p.repeat)))
        else:
            if p.before:
                one.append(Lit(p.before))
            if p.pad:
                one.append(Spaces())
            assert p.number is not None
            one.append(Field(p.number, p.column))
        out.extend([Opt(tuple(one))] if p.optional is True else one)
    return tuple(out)


def prefix_of(parts: Sequence[Part]) -> tuple[Token, ...]:
    return tokens_of(parts)


def program(tokens: Sequence[Token], column: dict[str, int]) -> list[Op]:
    """The native scanner's ops for ``tokens``; ``column``: the output column of each field name
    (a name not in it is read but not kept)."""
    ops: list[Op] = []
    before = b""  # a text right before a number: checked by the number's op (one op, not two)
    for i, t in enumerate(tokens):
        if isinstance(t, Lit) and i + 1 < len(tokens) and isinstance(tokens[i + 1], Field):
            before = t.text.encode()
            continue
        if isinstance(t, Lit):
            ops.append((LIT, 0, 0, t.text.encode()))
        elif isinstance(t, OneOf):
            ops.append((CHOICE, len(t.options), 0, b"\0".join(o.encode() for o in t.options)))
        elif isinstance(t, Spaces):
            ops.append((SPACES, 0, 0, b""))
        elif isinstance(t, Field):
            col = column.get(t.name or "", NO_COLUMN)
            if t.kind == "list":
                ops.append((LIST, col, 0, before))
            else:
                ops.append((NUM, SYNTAX[t.kind], col, before))
            before = b""
        elif isinstance(t, Chars):
            cls = CHAR_CLASSES.index(t.cls)
            hi = 0 if t.hi is None else t.hi
            ops.append((CHARS, cls | (int(t.lazy) << 8) | (t.lo << 16), hi, b""))
        elif isinstance(t, Clock):
            ops.append((CLOCK, CLOCK_KINDS.index(t.kind), 0, t.fmt.encode()))
        else:
            inner = program(t.parts, column)
            if isinstance(t, Opt):
                ops.append((OPT, len(inner), 0, b""))
            elif isinstance(t, Repeat):
                ops.append((REPEAT, len(inner), 0, b""))
            else:
                assert isinstance(t, Capture)
                ops.append((CAPTURE, len(inner), CAPTURES.index(t.name), b""))
            ops.extend(inner)
    return ops
