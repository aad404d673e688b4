"""Whole-buffer fast path: the columns of a buffer of whole lines, without the line parser.

:func:`scan_chunk` finds every line holding one of :data:`grammar.ANCHORS` (the texts the line
parser acts on); all other lines are skipped unread. If every such line is a canonical line of
:data:`grammar.SHAPES` (SGLang ``Decode batch``, vLLM V1 ``SpecDecoding metrics`` and the
``Engine NNN`` line it pairs with) it returns the records as :class:`RecordColumns`, else
``None`` and the caller parses the buffer line by line with :class:`LineParser`.

This is exact, not heuristic: the contract (checked by the tests on generated and real lines)
is ``RecordColumns.from_records(line parser records) == scan_chunk(...).columns``. What a record
needs from lines outside the buffer (the vLLM engine line printed just before a spec line, the
year of vLLM's year-less stamps) is returned in :class:`Edge` for the caller to settle in
line order.

The optional C scanner (``_fastscan.c``, built by setup.py) gives the same answers several
times faster; without it (or with ``SPECWATCH_NATIVE=0``, see :mod:`tui.core.native`) the
pure-Python scanner below runs, its patterns compiled from the grammar.
"""

from __future__ import annotations

import calendar
import math
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

from tui.core import native
from tui.core.formats import grammar
from tui.core.formats.timestamps import TimestampReader
from tui.core.formats.vllm.spec import no_bonus_token
from tui.core.model.columns import NUMERIC_FIELDS, FlatRows, RecordColumns, doubles
from tui.core.model.records import RATE_DRAFTS

# the optional native scanner (setup.py; off with SPECWATCH_NATIVE=0): same answers, several times faster
_native = native.load("tui.core.formats._fastscan")

_ANCHORS = tuple(a.encode() for a in grammar.ANCHORS)
_SHAPE = {(s.family, s.kind): s for s in grammar.SHAPES}
_DECODE, _SPEC, _ENGINE, _LLAMA = (
    _SHAPE[k].anchor.encode()
    for k in (("sglang", "decode"), ("vllm", "spec"), ("vllm", "engine"), ("llamacpp", "timing"))
)
if _native is not None:
    _native.configure(_ANCHORS, tuple(_ANCHORS.index(a) for a in (_DECODE, _SPEC, _ENGINE, _LLAMA)))
_SHAPED = {a.encode() for a in grammar.SHAPED_ANCHORS}
_REGEX: dict[bytes, tuple[re.Pattern[bytes], list[str | None]]] = {}


def _re(anchor: bytes) -> tuple[re.Pattern[bytes], list[str | None]]:
    """The Python scanner's pattern for a shape (compiled from the grammar when first needed: the
    native scanner reads most buffers, and compiling costs start-up time)."""
    if not _REGEX:
        _REGEX.update({s.anchor.encode(): grammar.regex(s) for s in grammar.SHAPES})
    return _REGEX[anchor]


NAN = math.nan


@dataclass(slots=True)
class Edge:
    """What the records of a buffer need settled against the lines before it, in line order: the
    line a first record pairs with (a shape's ``pairs_with``) and the year of year-less stamps.
    The family's plug-in settles it (:meth:`tui.core.formats.plugin.Format.settle_scan`)."""

    family: str
    process: str | None  # the process tag of every line of the family in the buffer
    head_unpaired: bool  # the first record came before any line it pairs with in the buffer
    tail: tuple[int, float, int] | None  # the paired columns of a line after the last record
    first_stamp: tuple[int, int, int, int, int] | None  # (month, day, h, m, s) of the first line
    last_md: tuple[int, int] | None
    year: int  # the year the stamps were read with


@dataclass(slots=True)
class Scan:
    lines: int
    runs: list[RecordColumns] = field(default_factory=list)
    edge: Edge | None = None


def scan_chunk(buf: bytes | memoryview, year: int = 1970) -> Scan | None:
    """``buf`` must hold whole lines (end with a newline); ``year`` is given to vLLM's year-less
    stamps (the caller checks it against the line parser's reading, see Edge)."""
    if grammar.EXTRA_ANCHORS and grammar.extra_line(buf) >= 0:
        return None  # a line of a family registered at run time: the line parser's
    if _native is not None:
        r = _native.scan(buf, year)
        if r is None:
            return None
        if r is not False:  # False: a line fits the grammar's wider shape only: Python reads it
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
    """Where the native scanner stops reading ``buf`` (whole lines): the offset of the first line
    it cannot read, -1 when it reads them all or is not built. The lines before that one can be
    read fast, the line itself by the line parser."""
    if _native is None:
        return -1
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
    n_lines, family, n, line_nos, cols, tags, tag_idx, pp, pp_k, vllm = r
    if not n:
        return Scan(n_lines, [], _edge(vllm, year) if vllm else None)
    values = {name: doubles(raw) for name, raw in zip(NUMERIC_FIELDS, cols)}
    eng = doubles(cols[len(NUMERIC_FIELDS)])
    nos = array("q")
    nos.frombytes(line_nos)
    if family == 1:
        names = [t.decode().strip() for t in tags]
        ranks: list[str | None] = [names[i] for i in tag_idx] if len(names) > 1 else [names[0]] * n
        rc = RecordColumns("sglang", "decode", n, values, ranks, None, None, False, nos, n_lines)
        return Scan(n_lines, [rc])
    flat = doubles(pp)
    per_pos: Sequence[tuple[float, ...] | None]
    k0 = pp_k[0]
    if pp_k.count(k0) == n:  # one k throughout (the usual case): kept flat
        per_pos = FlatRows(flat, k0)
    else:
        rows = []
        i = 0
        for k in pp_k:
            rows.append(tuple(flat[i : i + k]))
            i += k
        per_pos = rows
    rc = RecordColumns(
        "vllm", "spec", n, values, _engine_ranks(eng), per_pos, _rate_def(values), False, nos, n_lines
    )
    return Scan(n_lines, [rc], _edge(vllm, year))


def _edge(v: tuple, year: int) -> Edge:
    proc, head, tail, have_stamp, first, last_md = v
    return Edge(
        "vllm",
        proc.decode() if proc is not None else None,
        bool(head),
        (int(tail[0]), tail[1], int(tail[2])) if tail is not None else None,
        tuple(first) if have_stamp else None,
        tuple(last_md) if have_stamp else None,
        year,
    )


_ENGINE_NAMES: dict[float, str] = {}


def _engine_ranks(eng: array) -> list[str | None] | None:
    if eng and not math.isnan(sum(eng)) and min(eng) == max(eng):  # one engine throughout
        return [f"engine {int(eng[0])}"] * len(eng)
    rest = eng[1:]
    if rest and eng[0] != eng[0] and not math.isnan(sum(rest)) and min(rest) == max(rest):
        return [None] + [f"engine {int(rest[0])}"] * len(rest)  # the first one paired before
    out: list[str | None] = []
    for e in eng:
        if e != e:
            out.append(None)
            continue
        name = _ENGINE_NAMES.get(e)
        if name is None:
            name = _ENGINE_NAMES[e] = f"engine {int(e)}"
        out.append(name)
    return out if any(r is not None for r in out) else None


def _rate_def(values: dict[str, array]) -> str | None:
    col = values["accept_rate"]
    return RATE_DRAFTS if col and not (col[0] != col[0] and all(x != x for x in col)) else None


# -- Python ----------------------------------------------------------------------------------
def _scan_python(buf: bytes, year: int) -> Scan | None:
    if not buf.endswith(b"\n"):
        return None
    found: list[tuple[int, bytes]] = []
    for a in _ANCHORS:
        i = buf.find(a)
        if i < 0:
            continue
        if a not in _SHAPED:
            return None  # a marker, a V0 line, llama.cpp: the line parser's
        while i >= 0:
            found.append((i, a))
            i = buf.find(a, i + 1)
    n_lines = buf.count(b"\n")
    if not found:
        return Scan(n_lines)
    found.sort()
    families = {a for _, a in found}
    if families == {_DECODE}:
        return _sglang(buf, found, n_lines)
    if families == {_LLAMA}:
        return _llama(buf, found, n_lines)
    if families & {_DECODE, _LLAMA}:
        return None  # several families in one buffer: the line parser's
    return _vllm(buf, found, n_lines, year)


def _lines(buf: bytes, found: list[tuple[int, bytes]]):
    """(line number, line start, match) of each anchor line; None when one is not canonical or
    holds a second anchor."""
    out = []
    no, counted, last_start = 0, 0, -1
    for pos, a in found:
        ls = buf.rfind(b"\n", 0, pos) + 1
        if ls == last_start:
            return None  # two anchors on one line
        last_start = ls
        m = _re(a)[0].match(buf, ls)
        if m is None:
            return None
        no += buf.count(b"\n", counted, ls)
        counted = ls
        out.append((no + 1, m))
    return out


def _f(text: bytes | None) -> float:
    return NAN if text is None else float(text)


def _sglang(buf: bytes, found: list[tuple[int, bytes]], n_lines: int) -> Scan | None:
    got = _lines(buf, found)
    if got is None:
        return None
    _, names = _re(_DECODE)
    cols: dict[str, list[float]] = {f: [] for f in NUMERIC_FIELDS}
    ranks: list[str | None] = []
    nos = array("q")
    for no, m in got:
        ts = _sglang_ts(m.group(1))
        if ts is None:
            return None
        g = m.groups()[2:]
        row = dict.fromkeys(NUMERIC_FIELDS, NAN)
        row["timestamp"] = ts
        for name, text in zip(names, g):
            if name is not None and text is not None:
                row[name] = float(text)
        for f in NUMERIC_FIELDS:
            cols[f].append(row[f])
        ranks.append(m.group(2).decode().strip())
        nos.append(no)
    values = {f: array("d", cols[f]) for f in NUMERIC_FIELDS}
    return Scan(
        n_lines, [RecordColumns("sglang", "decode", len(nos), values, ranks, None, None, False, nos, n_lines)]
    )


def _sglang_ts(text: bytes) -> float | None:
    y, mo, d = int(text[0:4]), int(text[5:7]), int(text[8:10])
    h, mi, s = int(text[11:13]), int(text[14:16]), int(text[17:19])
    if not (1 <= mo <= 12 and 1 <= d <= 31) or h > 23 or mi > 59 or s > 60:
        return None
    return float(calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)))


def _llama(buf: bytes, found: list[tuple[int, bytes]], n_lines: int) -> Scan | None:
    got = _lines(buf, found)
    if got is None:
        return None
    _, names = _re(_LLAMA)
    cols: dict[str, list[float]] = {f: [] for f in NUMERIC_FIELDS}
    per_pos: list[tuple[float, ...] | None] = []
    nos = array("q")
    for no, m in got:
        row = dict.fromkeys(NUMERIC_FIELDS, NAN)
        elapsed = TimestampReader.elapsed(m.group(0).decode())
        row["elapsed"] = NAN if elapsed is None else elapsed
        pp = None
        for name, text in zip(names, m.groups()[4:]):
            if text is None:
                continue
            if name == "per_position":
                pp = tuple(float(x) for x in text.split(b", "))
            elif name is not None:
                row[name] = float(text)
        for f in NUMERIC_FIELDS:
            cols[f].append(row[f])
        per_pos.append(pp)
        nos.append(no)
    values = {f: array("d", cols[f]) for f in NUMERIC_FIELDS}
    pp_col = per_pos if any(p is not None for p in per_pos) else None
    rc = RecordColumns("llamacpp", "timing", len(nos), values, None, pp_col, RATE_DRAFTS, False, nos, n_lines)
    return Scan(n_lines, [rc])


def _percent(text: bytes) -> float:
    """``62.4`` (printed ``62.4%``) → 0.624, the double nearest the printed decimal / 100."""
    dec = len(text) - text.find(b".") - 1
    return round(float(text) / 100.0, dec + 2)


def _vllm(buf: bytes, found: list[tuple[int, bytes]], n_lines: int, year: int) -> Scan | None:
    got = _lines(buf, found)
    if got is None:
        return None
    spec_names = _re(_SPEC)[1]
    proc: bytes | None = None
    first = True
    pending: tuple[int, float, int] | None = None
    head_unpaired = saw_spec = False
    first_stamp: tuple[int, int, int, int, int] | None = None
    last_md: tuple[int, int] | None = None
    cols: dict[str, list[float]] = {f: [] for f in NUMERIC_FIELDS}
    ranks: list[str | None] = []
    per_pos: list[tuple[float, ...] | None] = []
    nos = array("q")
    for no, m in got:
        p = m.group(1)
        if first:
            if p is not None and (any(a in p for a in _ANCHORS) or b"Engine " in p):
                return None
            proc, first = p, False
        elif p != proc:
            return None  # several processes: the line parser pairs per process
        stamp = tuple(int(x) for x in m.groups()[1:6])
        mo, d, h, mi, s = stamp
        if not (1 <= mo <= 12 and 1 <= d <= 31) or h > 23 or mi > 59 or s > 60:
            return None
        if last_md is not None and (mo, d) < last_md and last_md[0] - mo >= 6:
            return None  # a new year: the line parser's
        if first_stamp is None:
            first_stamp = (mo, d, h, mi, s)
        last_md = (mo, d)
        g = m.groups()[7:]
        if m.re is _re(_ENGINE)[0]:
            pending = (int(g[0]), float(g[2]), int(g[3]))
            continue
        frac = m.group(7)
        ts = calendar.timegm((year, mo, d, h, mi, s, 0, 0, 0)) + (
            int(frac) / 10 ** len(frac) if frac else 0.0
        )
        row = dict.fromkeys(NUMERIC_FIELDS, NAN)
        row["timestamp"] = ts
        pp: tuple[float, ...] = ()
        drafted = b"0"
        for name, text in zip(spec_names, g):
            if name is None or text is None:
                continue
            if name == "drafted":
                drafted = text
            if name == "accept_rate":
                row[name] = _percent(text)
            elif name == "per_position":
                pp = tuple(float(x) for x in text.split(b", "))
            else:
                row[name] = float(text)
        if no_bonus_token(row["accept_len"], pp):
            return None  # vLLM < 0.9's length without the bonus token: the line parser's
        # from the printed integer, as the line parser divides it (beyond 2**53 a double is not it)
        row["num_drafts"] = int(drafted) / len(pp)
        if pending is not None:
            row["throughput"], row["running_req"] = pending[1], float(pending[2])
            ranks.append(f"engine {pending[0]}")
            pending = None
        else:
            head_unpaired = head_unpaired or not saw_spec
            ranks.append(None)
        saw_spec = True
        for f in NUMERIC_FIELDS:
            cols[f].append(row[f])
        per_pos.append(pp)
        nos.append(no)
    edge = Edge(
        "vllm",
        proc.decode() if proc is not None else None,
        head_unpaired,
        pending,
        first_stamp,
        last_md,
        year,
    )
    if not nos:
        return Scan(n_lines, [], edge)
    values = {f: array("d", cols[f]) for f in NUMERIC_FIELDS}
    rc = RecordColumns(
        "vllm",
        "spec",
        len(nos),
        values,
        ranks if any(r is not None for r in ranks) else None,
        per_pos,
        _rate_def(values),
        False,
        nos,
        n_lines,
    )
    return Scan(n_lines, [rc], edge)
