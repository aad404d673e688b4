"""Lines of any declared shape, drawn by hypothesis from the shape's own tokens (every optional
part, odd numbers, rank tags, process tags), for the tests that hold the native scanner to the
Python one for every family: shipped ones and one defined only by data under tests/families."""

from __future__ import annotations

import string

from hypothesis import strategies as st

from tui.core.formats.shapes import Capture, Chars, Clock, Field, Lit, OneOf, Opt, Repeat, Shape, Spaces

_CLASS_CHARS = {
    "0-9": string.digits,
    "A-Z": string.ascii_uppercase,
    "A-Z_": string.ascii_uppercase + "_",
    "A-Za-z0-9_": string.ascii_letters + string.digits + "_",
    "A-Za-z0-9_ ": string.ascii_letters + string.digits + "_ ",
    "A-Za-z0-9_.": string.ascii_letters + string.digits + "_.",
}
_WIDTH = {"Y": 4, "m": 2, "d": 2, "H": 2, "M": 2, "S": 2, "L": 3, "U": 3}
_RANGE = {"Y": (1970, 2099), "m": (1, 12), "d": (1, 28), "H": (0, 23), "M": (0, 59), "S": (0, 59)}


def _digits(lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.text(string.digits, min_size=lo, max_size=hi)


def _number(kind: str) -> st.SearchStrategy[str]:
    dec = st.builds(lambda a, b: f"{a}.{b}", _digits(1, 8), _digits(1, 6))
    if kind == "int":
        return _digits(1, 16)  # 16 digits: beyond the native converter, the Python scanner's
    if kind == "float":
        return dec
    if kind == "percent":
        return dec.map(lambda x: x + "%")
    return st.lists(dec, min_size=1, max_size=8).map(", ".join)


def _clock(c: Clock) -> st.SearchStrategy[str]:
    parts: list[st.SearchStrategy[str]] = []
    i, f = 0, c.fmt
    while i < len(f):
        if f[i] != "%":
            parts.append(st.just(f[i]))
            i += 1
            continue
        d = f[i + 1]
        i += 2
        if d == "N":
            parts.append(_digits(1, 3))
        elif d == "f":
            parts.append(st.one_of(st.just(""), _digits(1, 6).map(lambda x: "." + x)))
        elif d in _RANGE and c.kind != "elapsed":
            lo, hi = _RANGE[d]
            w = _WIDTH[d]
            parts.append(st.integers(lo, hi).map(lambda v, w=w: f"{v:0{w}d}"))
        else:
            parts.append(_digits(_WIDTH[d], _WIDTH[d]))
    return st.tuples(*parts).map("".join)


def tokens(ts: tuple, lazy_stop: str = "") -> st.SearchStrategy[str]:
    parts: list[st.SearchStrategy[str]] = []
    for i, t in enumerate(ts):
        nxt = ts[i + 1] if i + 1 < len(ts) else None
        if isinstance(t, Lit):
            parts.append(st.just(t.text))
        elif isinstance(t, OneOf):
            parts.append(st.sampled_from(t.options))
        elif isinstance(t, Spaces):
            parts.append(st.integers(0, 3).map(lambda n: " " * n))
        elif isinstance(t, Field):
            parts.append(_number(t.kind))
        elif isinstance(t, Chars):
            hi = t.hi if t.hi is not None else t.lo + 6
            text = st.text(_CLASS_CHARS[t.cls], min_size=t.lo, max_size=hi)
            if t.lazy and isinstance(nxt, Lit):
                stop = nxt.text
                text = text.filter(lambda x, stop=stop: stop not in x + stop[:-1])
            parts.append(text)
        elif isinstance(t, Clock):
            parts.append(_clock(t))
        elif isinstance(t, Capture):
            parts.append(tokens(t.parts))
        elif isinstance(t, Repeat):
            parts.append(st.lists(tokens(t.parts), max_size=3).map("".join))
        else:
            assert isinstance(t, Opt)
            parts.append(st.one_of(st.just(""), tokens(t.parts)))
    return st.tuples(*parts).map("".join) if parts else st.just("")


def line(shape: Shape) -> st.SearchStrategy[str]:
    """A line of ``shape`` (no newline)."""
    return tokens((*shape.prefix, *shape.lead, Lit(shape.anchor), *shape.body))
