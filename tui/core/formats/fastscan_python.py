"""The Python path of the whole-buffer scanner (:mod:`tui.core.formats.fastscan`): the declared
shapes read through regular expressions compiled from the same tokens the native scanner's
program is made of (:func:`tui.core.formats.shapes.regex`), with the same result, record for
record (tests/unit/test_fastscan.py, tests/unit/test_data_family.py). Imported only when a buffer
goes this way (``SPECWATCH_NATIVE=0``, no build, or a line the native code leaves to it): the
compiled shapes (``_SHAPES``, ``_BY_ANCHOR`` …) are :mod:`fastscan`'s, shared by the two
interpreters.
"""

from __future__ import annotations

import calendar
import re
from array import array
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from tui.core.formats.families import FAMILIES
from tui.core.formats.family_data import sum_match
from tui.core.formats.scan_shapes import (
    _ANCHORS,
    _BY_ANCHOR,
    _EDGED,
    _FORBIDDEN_IN_TAG,
    NAN,
    Scan,
    _edge,
    _paired_ranks,
    _pairing_of,
    _rate_def,
    _Shape,
)
from tui.core.formats.shape_program import CAPTURES, CLOCK_KINDS
from tui.core.formats.shapes import regex
from tui.core.model.columns import NUMERIC_FIELDS, RecordColumns


@dataclass(slots=True)
class _Reader:
    """One shape's compiled pattern and what each of its groups is."""

    s: _Shape
    pattern: re.Pattern[bytes]
    fields: list[tuple[int, str, str]]  # (group, column, syntax)
    clock: list[tuple[int, str]]  # (group, directive)
    clock_kind: str | None
    rank: int  # group of the rank capture, -1
    process: int  # group of the process capture, -1
    # a date clock's groups but the fraction, and what they read as: (seconds, stamp) or None
    # (records share their second: each is worked out once; bounded)
    stamps: dict[tuple[object, int], tuple[float, tuple[int, int, int, int, int]] | None] = field(
        default_factory=dict
    )
    whole: tuple[int, ...] = ()  # the clock's groups but the fraction's
    frac: int = 0  # the fraction's group, 0: none


_READERS: dict[bytes, list[_Reader]] = {}


def _readers(anchor: bytes) -> list[_Reader]:
    """The Python scanner's patterns for an anchor's shapes (compiled when first needed: the
    native scanner reads most buffers, and compiling costs start-up time)."""
    if not _READERS:
        for a, shapes in _BY_ANCHOR.items():
            out = []
            for s in shapes:
                pattern, roles = regex(s.shape)
                fields, clock = [], []
                kind, rank, process = None, -1, -1
                for g, role in enumerate(roles, 1):
                    if role[0] == "field" and role[1]:
                        fields.append((g, role[1], role[2]))
                    elif role[0] == "clock":
                        kind = role[1]
                        clock.append((g, role[2]))
                    elif role[0] == "capture":
                        if role[1] == CAPTURES[0]:
                            rank = g
                        else:
                            process = g
                whole = tuple(g for g, k in clock if k != "f")
                frac = next((g for g, k in clock if k == "f"), 0)
                out.append(_Reader(s, pattern, fields, clock, kind, rank, process, whole=whole, frac=frac))
            _READERS[a] = out
    return _READERS.get(anchor, [])


def _percent(text: bytes) -> float:
    """``62.4`` (printed ``62.4%``) → 0.624, the double nearest the printed decimal / 100."""
    dec = len(text) - text.find(b".") - 1
    return round(float(text) / 100.0, dec + 2)


STAMPS_KEPT = 4096


def _stamp(m: re.Match[bytes], rd: _Reader, year: int) -> tuple[float, tuple[int, int, int, int, int]] | None:
    """(seconds, (month, day, h, m, s)) of a date or year-less clock; None when out of range."""
    key = (m.group(*rd.whole), year)
    if key in rd.stamps:
        whole = rd.stamps[key]
    else:
        whole = _whole_second(m, rd, year)
        if len(rd.stamps) >= STAMPS_KEPT:
            rd.stamps.clear()
        rd.stamps[key] = whole
    if whole is None:
        return None
    frac = m.group(rd.frac) if rd.frac else None
    return whole[0] + (int(frac) / 10 ** len(frac) if frac else 0.0), whole[1]


def _whole_second(
    m: re.Match[bytes], rd: _Reader, year: int
) -> tuple[float, tuple[int, int, int, int, int]] | None:
    d: dict[str, bytes] = {k: m.group(g) for g, k in rd.clock}
    mo, dd, h, mi, s = (int(d[k]) for k in "mdHMS")
    if not (1 <= mo <= 12 and 1 <= dd <= 31) or h > 23 or mi > 59 or s > 60:
        return None
    y = int(d["Y"]) if "Y" in d else year
    return float(calendar.timegm((y, mo, dd, h, mi, s, 0, 0, 0))), (mo, dd, h, mi, s)


def _elapsed(m: re.Match[bytes], rd: _Reader) -> float:
    d = {k: int(m.group(g)) for g, k in rd.clock}
    return d["N"] * 60 + d["S"] + d["L"] / 1e3 + d["U"] / 1e6


class _Stop(Exception):
    """The scanner stops at the line starting at ``ls``: the line parser's."""

    def __init__(self, ls: int) -> None:
        self.ls = ls


def refused_python(buf: bytes, year: int) -> int:
    """Where the Python scanner stops reading ``buf`` (whole lines), as the native scanner's
    ``where`` mode says it: the start of the first line it cannot read (a marker, a line of
    another family, a line that conflicts with the ones before it), -1 when it reads them all.
    The lines before that one scan; so a range is cut into the same parts either way."""
    found, stop = _anchors(buf)
    if found:
        try:
            _read_family(buf, found, buf.count(b"\n"), year, _BY_ANCHOR[found[0][1]][0].family)
        except _Stop as e:
            return e.ls
    return stop if stop < len(buf) else -1


def scan_python(buf: bytes, year: int) -> Scan | None:
    """The Python scanner: what :func:`tui.core.formats.fastscan.scan_chunk` gives for ``buf``
    (whole lines), without the native code."""
    if not buf.endswith(b"\n"):
        return None
    found, stop = _anchors(buf)
    if stop < len(buf):
        return None  # a marker (a line of no declared shape), or several families: the line parser's
    n_lines = buf.count(b"\n")
    if not found:
        return Scan(n_lines)
    try:
        return _read_family(buf, found, n_lines, year, _BY_ANCHOR[found[0][1]][0].family)
    except _Stop:
        return None


def _anchors(buf: bytes) -> tuple[list[tuple[int, bytes]], int]:
    """The shaped anchors of ``buf`` in order, (offset, anchor), up to where the scanner must
    stop before reading a line: the start of the first line that holds a marker or an anchor of
    a second family (``len(buf)``: none)."""
    stop = len(buf)
    found: list[tuple[int, bytes]] = []
    for a in _ANCHORS:
        i = buf.find(a)
        if i >= 0 and a not in _BY_ANCHOR:
            stop = min(stop, buf.rfind(b"\n", 0, i) + 1)
        while i >= 0 and a in _BY_ANCHOR:
            found.append((i, a))
            i = buf.find(a, i + 1)
    found = sorted(f for f in found if f[0] < stop)
    if found:
        fam = _BY_ANCHOR[found[0][1]][0].family
        other = next((j for j, (_, a) in enumerate(found) if _BY_ANCHOR[a][0].family != fam), None)
        if other is not None:
            stop = min(stop, buf.rfind(b"\n", 0, found[other][0]) + 1)
            found = found[:other]
    return found, stop


def _read_family(buf: bytes, found: list[tuple[int, bytes]], n_lines: int, year: int, fi: int) -> Scan | None:
    edged = _EDGED[fi]
    rows: list[tuple[float, ...]] = []  # each record's NUMERIC_FIELDS
    fields_of = itemgetter(*NUMERIC_FIELDS)
    ranks: list[str | None] = []
    per_pos: list[tuple[float, ...] | None] = []
    paired: list[float] = []  # the pairing rank column of each record
    nos = array("q")
    record: _Shape | None = None
    proc: bytes | None = None
    first = True
    pending: dict[str, float] | None = None
    head_unpaired = saw_record = False
    first_stamp: tuple[int, int, int, int, int] | None = None
    last_md: tuple[int, int] | None = None
    no, counted, last_start = 0, 0, -1
    for pos, a in found:
        ls = buf.rfind(b"\n", 0, pos) + 1
        if ls == last_start:
            raise _Stop(ls)  # two anchors on one line
        last_start = ls
        for rd in _readers(a):
            m = rd.pattern.match(buf, ls)
            if m is not None:
                break
        else:
            raise _Stop(ls)
        no += buf.count(b"\n", counted, ls)
        counted = ls
        s = rd.s
        if rd.process >= 0 or edged:
            p = m.group(rd.process) if rd.process >= 0 else None
            if first:
                if p is not None and any(t in p for t in _FORBIDDEN_IN_TAG):
                    raise _Stop(ls)
                proc, first = p, False
            elif p != proc:
                raise _Stop(ls)  # several processes: the line parser pairs per process
        ts = NAN
        if rd.clock_kind == CLOCK_KINDS[2]:
            elapsed = _elapsed(m, rd)
        elif rd.clock_kind is not None:
            st = _stamp(m, rd, year)
            if st is None:
                raise _Stop(ls)
            ts, stamp = st
            if rd.clock_kind == CLOCK_KINDS[1]:  # year-less: every stamp moves the year reader
                md = stamp[:2]
                if last_md is not None and md < last_md and last_md[0] - md[0] >= 6:
                    raise _Stop(ls)  # a new year: the line parser's
                if first_stamp is None:
                    first_stamp = stamp
                last_md = md
        values: dict[str, Any] = {}
        exact: dict[str, int] = {}
        for g, name, syntax in rd.fields:
            text = m.group(g)
            if text is None:
                continue
            if syntax == "list":
                values[name] = tuple(float(x) for x in text.split(b", "))
            elif syntax == "percent":
                values[name] = _percent(text)
            else:
                values[name] = float(text)
                if name in s.ints:
                    exact[name] = int(text)
        if s.pairs:
            pending = {c: values.get(c, NAN) for c in s.columns}
            continue
        if record is None:
            record = s
        elif record is not s:
            raise _Stop(ls)  # records of two shapes in one buffer: the line parser's
        row = dict.fromkeys(NUMERIC_FIELDS, NAN)
        if rd.clock_kind == CLOCK_KINDS[2]:
            row["elapsed"] = elapsed
        else:
            row["timestamp"] = ts
        pp: tuple[float, ...] | None = None
        for name, v in values.items():
            if isinstance(v, tuple):
                pp = v
            else:
                row[name] = v
        if s.sum_match is not None and pp:
            row[s.sum_match[1]] = sum_match(row[s.sum_match[0]], pp, *s.sum_match[2:])
        for name, (col, _lst) in s.per_list_item.items():
            if pp:  # from the printed integer, as the line parser divides it
                row[name] = (exact[col] if col in exact else row[col]) / len(pp)
        rank_v = NAN
        if pending is not None:
            for c, v in pending.items():
                if c in row:
                    row[c] = v
                else:
                    rank_v = v
            pending = None
        elif edged:
            head_unpaired = head_unpaired or not saw_record
        saw_record = True
        rows.append(fields_of(row))
        ranks.append(m.group(rd.rank).decode().strip() if rd.rank >= 0 else None)
        paired.append(rank_v)
        per_pos.append(pp)
        nos.append(no + 1)
    edge = (
        _edge(
            fi,
            proc.decode() if proc is not None else None,
            head_unpaired,
            pending,
            first_stamp,
            last_md,
            year,
        )
        if edged
        else None
    )
    if record is None:
        return Scan(n_lines, [], edge)
    values_a = {f: array("d", col) for f, col in zip(NUMERIC_FIELDS, zip(*rows))}
    rk: list[str | None] | None = ranks if any(r is not None for r in ranks) else None
    if rk is None:
        rk = _paired_ranks(_pairing_of(fi), paired)
    pp_col = per_pos if any(p is not None for p in per_pos) else None
    rc = RecordColumns(
        FAMILIES[fi].name,
        record.shape.kind,
        len(nos),
        values_a,
        rk,
        pp_col,
        _rate_def(record.rate, values_a),
        False,
        nos,
        n_lines,
    )
    return Scan(n_lines, [rc], edge)
