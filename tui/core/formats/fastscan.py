"""Whole-buffer fast path: the columns of a buffer of whole lines, without the line parser.

:func:`scan_chunk` finds every line holding one of :data:`grammar.ANCHORS` (the texts the line
parser acts on); all other lines are skipped unread. If every such line is a line of one of the
families' declared shapes (:data:`grammar.SHAPES`, from each family's ``family.toml``) it returns
the records as :class:`RecordColumns`, else ``None`` and the caller parses the buffer line by
line with :class:`LineParser`. Nothing here knows a family: the shapes say what each line holds
(its numbers and the columns they fill, its clock, its rank, its process tag), what a record
derives (``per_list_item``), which era a line's numbers show (``sum_match``) and which line
pairs with the next record (``pairs_with``).

This is exact, not heuristic: the contract (checked by the tests on generated and real lines)
is ``RecordColumns.from_records(line parser records) == scan_chunk(...).columns``. What a record
needs from lines outside the buffer (the line a first record pairs with, the year of year-less
stamps) is returned in :class:`Edge` for the family's plug-in to settle in line order.

The optional C scanner (``_fastscan.c``, built by setup.py) interprets the same shapes, passed to
it once as a program (:mod:`tui.core.formats.shape_program`), several times faster; without it
(or with ``SPECWATCH_NATIVE=0``, see :mod:`tui.core.native`) the Python scanner
(:mod:`tui.core.formats.fastscan_python`) reads them through regular expressions compiled from
the same tokens.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Sequence
from typing import Any

from tui.core import native
from tui.core.formats import grammar
from tui.core.formats.families import FAMILIES
from tui.core.formats.scan_shapes import (
    _ANCHORS,
    _EDGED,
    _FORBIDDEN_IN_TAG,
    _SHAPES,
    LAYOUT,
    Scan,
    _edge,
    _paired_ranks,
    _pairing_of,
    _rate_def,
)
from tui.core.formats.shape_program import CAPTURES, program
from tui.core.formats.shapes import Capture, Chars, Lit, OneOf, Shape
from tui.core.model.columns import NUMERIC_FIELDS, FlatRows, RecordColumns, doubles


def _may_spell_anchor(shape: Shape) -> bool:
    """Whether a line of ``shape`` could hold an anchor besides its own: one of its texts holds
    one, or an anchor is made only of the characters of one of its runs (a process tag is
    checked apart). Then the native scanner looks again inside each line it reads."""
    texts: list[str] = []
    classes: list[str] = []

    def walk(tokens: Sequence[Any], in_process: bool) -> None:
        for t in tokens:
            if isinstance(t, Lit):
                texts.append(t.text)
            elif isinstance(t, OneOf):
                texts.extend(t.options)
            elif isinstance(t, Chars) and not in_process:
                classes.append(t.cls)
            elif isinstance(t, Capture):
                walk(t.parts, in_process or t.name == CAPTURES[1])
            elif hasattr(t, "parts"):
                walk(t.parts, in_process)

    walk((*shape.prefix, *shape.lead, *shape.body), False)
    for a in grammar.ANCHORS:
        if any(a in t for t in texts if t != shape.anchor) or any(
            re.fullmatch("[" + c + "]+", a) for c in classes
        ):
            return True
    return False


# the optional native scanner (setup.py; off with SPECWATCH_NATIVE=0): same answers, several times faster
_native = native.load("tui.core.formats._fastscan")
if len(_ANCHORS) > 32 or len(_SHAPES) > 32 or len(LAYOUT) > 32 or len(FAMILIES) > 16:
    _native = None  # beyond the native kernel's tables (_fastscan.c MAXA, MAXS, MAXC, MAXF): Python reads
if _native is not None:
    _col = {name: i for i, name in enumerate(LAYOUT)}
    _native.configure(
        _ANCHORS,
        _FORBIDDEN_IN_TAG,
        len(LAYOUT),
        _col["timestamp"],
        _col["elapsed"],
        tuple(
            (
                s.anchor,
                s.family,
                int(s.pairs),
                int(_may_spell_anchor(s.shape)),
                tuple(_col[c] for c in s.columns if c in _col),
                tuple((_col[d], _col[a]) for d, (a, _) in s.per_list_item.items()),
                (_col[s.sum_match[0]], _col[s.sum_match[1]], s.sum_match[2], s.sum_match[3], s.sum_match[4])
                if s.sum_match
                else (-1, -1, 0.0, 0.0, ()),
                program((*s.shape.prefix, *s.shape.lead, Lit(s.shape.anchor), *s.shape.body), _col),
            )
            for s in _SHAPES
        ),
    )


def scan_chunk(buf: bytes | memoryview, year: int = 1970) -> Scan | None:
    """``buf`` must hold whole lines (end with a newline); ``year`` is given to year-less
    stamps (the family's plug-in checks it against the line parser's reading, see Edge)."""
    if grammar.EXTRA_ANCHORS and grammar.extra_line(buf) >= 0:
        return None  # a line of a family registered at run time: the line parser's
    if _native is not None:
        r = _native.scan(buf, year)
        if r is None:
            return None
        if r is not False:  # False: a line of a shaped anchor C did not read (a long number)
            return _from_native(r, year)
    return _scan_python(bytes(buf), year)


def native_scanner() -> bool:
    return _native is not None


def line_end(buf: bytes | memoryview, at: int) -> int:
    """The offset just after the newline ending the line that starts at ``at``, or ``len(buf)``."""
    step, i = 256, at
    while True:
        chunk = bytes(buf[i : i + step])
        nl = chunk.find(b"\n")
        if nl >= 0:
            return i + nl + 1
        if not chunk:
            return len(buf)
        i += len(chunk)
        step *= 4


def refused_at(buf: bytes | memoryview, year: int = 1970) -> int:
    """Where the scanner stops reading ``buf`` (whole lines): the offset of the first line it
    cannot read, -1 when it reads them all (the native scanner's answer, else the Python
    scanner's, which agree). The lines before that one can be read fast, the line itself by the
    line parser."""
    if _native is None:
        from tui.core.formats.fastscan_python import refused_python

        at = refused_python(bytes(buf), year)
    else:
        at = int(_native.scan(buf, year, True))
    extra = grammar.extra_line(buf) if grammar.EXTRA_ANCHORS else -1  # a family registered later
    return at if extra < 0 or 0 <= at < extra else extra


def anchor_lines(buf: bytes) -> array:
    """The start offsets of the lines of ``buf`` that hold an anchor, in order: the only lines
    the line parser acts on (apart from the continuation of a hard-wrapped args dump)."""
    out = array("q")
    if _native is not None and not grammar.EXTRA_ANCHORS:
        out.frombytes(_native.anchor_lines(buf))
        return out
    starts = set()
    for a in _ANCHORS + tuple(a.encode() for a in grammar.EXTRA_ANCHORS):
        i = buf.find(a)
        while i >= 0:
            starts.add(buf.rfind(b"\n", 0, i) + 1)
            i = buf.find(a, i + 1)
    out.extend(sorted(starts))
    return out


# -- native ----------------------------------------------------------------------------------
def _from_native(r: tuple, year: int) -> Scan:
    n_lines, fi, si, n, line_nos, cols, ranks_seen, rank_idx, pp, pp_k, edge = r
    ed = None
    if fi >= 0 and _EDGED[fi] and edge is not None:
        proc, head, tail, have_stamp, first, last_md = edge
        pairing = _pairing_of(fi)
        tail_d = dict(zip(pairing.columns, tail)) if tail is not None and pairing is not None else None
        ed = _edge(
            fi,
            proc.decode() if proc is not None else None,
            bool(head),
            tail_d,
            tuple(first) if have_stamp else None,
            tuple(last_md) if have_stamp else None,
            year,
        )
    if not n:
        return Scan(n_lines, [], ed)
    s = _SHAPES[si]
    values = {name: doubles(raw) for name, raw in zip(NUMERIC_FIELDS, cols)}
    ranks: list[str | None] | None = None
    if ranks_seen:
        names = [t.decode().strip() for t in ranks_seen]
        ranks = [names[i] for i in rank_idx] if len(names) > 1 else [names[0]] * n
    else:
        pairing = _pairing_of(fi)
        if pairing is not None and pairing.rank_column is not None:
            ranks = _paired_ranks(pairing, doubles(cols[LAYOUT.index(pairing.rank_column)]))
    per_pos: Sequence[tuple[float, ...] | None] | None = None
    if pp_k and any(pp_k):
        flat = doubles(pp)
        k0 = pp_k[0]
        if k0 and pp_k.count(k0) == n:  # one k throughout (the usual case): kept flat
            per_pos = FlatRows(flat, k0)
        else:
            rows: list[tuple[float, ...] | None] = []
            i = 0
            for k in pp_k:
                rows.append(tuple(flat[i : i + k]) if k else None)
                i += k
            per_pos = rows
    nos = array("q")
    nos.frombytes(line_nos)
    fam = FAMILIES[fi].name
    rc = RecordColumns(
        fam, s.shape.kind, n, values, ranks, per_pos, _rate_def(s.rate, values), False, nos, n_lines
    )
    return Scan(n_lines, [rc], ed)


def _scan_python(buf: bytes, year: int) -> Scan | None:
    """The Python scanner (:mod:`tui.core.formats.fastscan_python`, loaded when first needed)."""
    from tui.core.formats.fastscan_python import scan_python

    return scan_python(buf, year)
