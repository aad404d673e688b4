"""The declared shapes compiled once, and what both scanners (:mod:`tui.core.formats.fastscan`'s
native kernel, :mod:`tui.core.formats.fastscan_python`) give from them: :class:`Scan`, its
:class:`Edge`, the rank names of a paired run and the rate definition of a run of records."""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tui.core.formats import grammar
from tui.core.formats.families import FAMILIES
from tui.core.formats.shapes import Field, Lit, Shape
from tui.core.model.columns import NUMERIC_FIELDS, RecordColumns
from tui.core.model.records import RATE_DRAFTS

NAN = math.nan
_RATES = {"drafts": RATE_DRAFTS}


@dataclass(slots=True)
class Edge:
    """What the records of a buffer need settled against the lines before it, in line order: the
    line a first record pairs with (a shape's ``pairs_with``) and the year of year-less stamps.
    The family's plug-in settles it (:meth:`tui.core.formats.plugin.Format.settle_scan`)."""

    family: str
    process: str | None  # the process tag of every line of the family in the buffer
    head_unpaired: bool  # the first record came before any line it pairs with in the buffer
    tail: dict[str, float] | None  # the columns of a pairing line after the last record
    first_stamp: tuple[int, int, int, int, int] | None  # (month, day, h, m, s) of the first line
    last_md: tuple[int, int] | None
    year: int  # the year the stamps were read with


@dataclass(slots=True)
class Scan:
    lines: int
    runs: list[RecordColumns] = field(default_factory=list)
    edge: Edge | None = None


# -- the declared shapes, compiled once --------------------------------------------------------
@dataclass(slots=True)
class _Shape:
    shape: Shape
    family: int  # index in FAMILIES
    anchor: int  # index in grammar.ANCHORS
    pairs: bool  # a pairing line: its columns go to the next record
    rank: str | None  # a pairing line's rank template ("engine {engine}")
    rank_column: str | None  # the column that template names
    rate: str | None
    per_list_item: dict[str, tuple[str, str]]
    # an era's evidence: (value column, column it goes to, within, per item, offsets)
    sum_match: tuple[str, str, float, float, tuple[float, ...]] | None
    columns: tuple[str, ...]  # the columns its fields fill (a pairing line's: what it passes on)
    ints: frozenset[str]  # its int columns (kept exact for a derived ratio)


def _fields(tokens: Sequence[Any]) -> list[Field]:
    out: list[Field] = []
    for t in tokens:
        if isinstance(t, Field):
            out.append(t)
        elif hasattr(t, "parts"):
            out.extend(_fields(t.parts))
    return out


def _compile() -> tuple[list[_Shape], tuple[str, ...]]:
    shapes = []
    extra: list[str] = []  # columns beyond NUMERIC_FIELDS: a pairing line's rank column
    for fi, fam in enumerate(FAMILIES):
        for sd in fam.data.shapes:
            shape = sd.shape(fam.data)
            fields = _fields((*shape.prefix, *shape.lead, *shape.body))
            cols = tuple(dict.fromkeys(f.name for f in fields if f.name))
            rank_col = None
            if sd.rank is not None:
                rank_col = re.fullmatch(r"[^{}]*\{(\w+)\}[^{}]*", sd.rank).group(1)  # type: ignore[union-attr]
                if rank_col not in extra and rank_col not in NUMERIC_FIELDS:
                    extra.append(rank_col)
            m = sd.sum_match
            shapes.append(
                _Shape(
                    shape,
                    fi,
                    grammar.ANCHORS.index(shape.anchor),
                    sd.pairs_with is not None,
                    sd.rank,
                    rank_col,
                    _RATES[sd.rate] if sd.rate else None,
                    dict(sd.per_list_item),
                    (m.value, m.column, m.within, m.per_item, tuple(m.offsets)) if m else None,
                    cols,
                    frozenset(f.name for f in fields if f.name and f.kind == "int"),
                )
            )
    return shapes, (*NUMERIC_FIELDS, *extra)


_SHAPES, LAYOUT = _compile()
_BY_ANCHOR: dict[bytes, list[_Shape]] = {}
for _s in _SHAPES:
    _BY_ANCHOR.setdefault(_s.shape.anchor.encode(), []).append(_s)
_ANCHORS = tuple(a.encode() for a in grammar.ANCHORS)
# texts a process tag may not hold (the anchors, and each lead's first text): the search would
# find them inside it, or a reader would take the tag for the line's own text
_FORBIDDEN_IN_TAG = _ANCHORS + tuple(
    dict.fromkeys(
        s.shape.lead[0].text.encode() for s in _SHAPES if s.shape.lead and isinstance(s.shape.lead[0], Lit)
    )
)


def _family_needs_edge(fi: int) -> bool:
    return any(
        s.pairs or any(getattr(t, "kind", None) == "yearless" for t in s.shape.prefix)
        for s in _SHAPES
        if s.family == fi
    )


_EDGED = [_family_needs_edge(i) for i in range(len(FAMILIES))]


# -- what both scanners give -------------------------------------------------------------------
_RANK_NAMES: dict[tuple[str, float], str] = {}


def _rank_name(template: str, column: str, v: float) -> str:
    name = _RANK_NAMES.get((template, v))
    if name is None:
        name = _RANK_NAMES[(template, v)] = template.replace("{" + column + "}", str(int(v)))
    return name


def _paired_ranks(s: _Shape | None, col: Sequence[float]) -> list[str | None] | None:
    if s is None or s.rank is None or s.rank_column is None or not col:
        return None
    t, c = s.rank, s.rank_column
    if not math.isnan(sum(col)) and min(col) == max(col):  # one engine throughout
        return [_rank_name(t, c, col[0])] * len(col)
    names = {e: _rank_name(t, c, e) for e in set(col) if e == e}  # (a NaN finds no name: None)
    out = list(map(names.get, col))
    return out if any(r is not None for r in out) else None


def _rate_def(rate: str | None, values: dict[str, array]) -> str | None:
    col = values["accept_rate"]
    return rate if rate and col and not (col[0] != col[0] and _all_nan(col)) else None


_NAN8 = array("d", [math.nan]).tobytes()


def _all_nan(col: Sequence[float]) -> bool:
    """Every value NaN: one comparison of bytes for a column the scanner left unfilled."""
    return (isinstance(col, array) and col.tobytes() == _NAN8 * len(col)) or all(x != x for x in col)


def _pairing_of(fi: int) -> _Shape | None:
    return next((s for s in _SHAPES if s.family == fi and s.pairs), None)


def _edge(
    fi: int, proc: str | None, head: bool, tail: dict[str, float] | None, first: Any, last: Any, year: int
):
    return Edge(FAMILIES[fi].name, proc, head, tail, first, last, year)
