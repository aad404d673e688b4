"""RecordColumns into the statistics, in two steps: :func:`reduce_columns` (anywhere: a worker
process) and :func:`apply_reduced` (in line order, in the process that owns the statistics).

This is the bulk equivalent of ``SourceStats.feed(records)`` for the records a RecordColumns
holds (the contract the tests check: the summaries are equal up to float summation order). It is
an adapter until the statistics' own entry point ``SourceStats.add_columns(cols)`` exists on
this branch; at merge, :func:`add_columns` becomes ``stats.add_columns(rc)`` and the two-step
form (needed so worker processes do the reducing) moves behind the statistics' API.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import mul

from tui.core.columns import RecordColumns
from tui.core.stats import SourceStats
from tui.core.stats.metrics import MAX_POSITIONS, MetricSet
from tui.core.stats.rates import MAX_SAMPLES
from tui.core.stats.series import ColumnChunk, Series

_NAN8 = array("d", [math.nan]).tobytes()
_SERIES = (
    "accept_len",
    "accept_rate",
    "throughput",
    "running_req",
    "accept_len_derived",
    "accept_rate_derived",
)
Weights = Sequence[float | None] | None


def _absent(col: array) -> bool:
    """No value present (all NaN, as the readers write it), tested at C speed."""
    return col.tobytes() == _NAN8 * len(col)


@dataclass(slots=True)
class Folded:
    """What MetricSet.add of a run of records adds, reduced (small, picklable)."""

    n: int
    chunks: dict[str, ColumnChunk] = field(default_factory=dict)  # per series, when every value was there
    pairs: dict[str, list[tuple[float, float | None]]] = field(default_factory=dict)  # else value by value
    accepted: int = 0
    drafted: int = 0
    pos: list[float] = field(default_factory=list)
    pos_w: float = 0.0
    first_ts: float | None = None
    last_ts: float | None = None


@dataclass(slots=True)
class Reduced:
    """A RecordColumns reduced: for all its records and per rank tag."""

    family: str
    n: int
    all: Folded
    ranks: dict[str, Folded]  # in order of first appearance
    rate_pairs: list[tuple[float, float]]  # SGLang (accept len, accept rate), for the rate definition
    rate_definition: str | None


def reduce_columns(rc: RecordColumns) -> Reduced:
    everything = _fold(rc)
    ranks: dict[str, Folded] = {}
    if rc.ranks is not None and rc.ranks[0] is not None and rc.ranks.count(rc.ranks[0]) == rc.n:
        ranks[rc.ranks[0]] = everything  # one rank tag throughout (the common case)
    elif rc.ranks is not None:
        by: dict[str, list[int]] = {}
        for i, r in enumerate(rc.ranks):
            if r is not None:
                by.setdefault(r, []).append(i)
        for r, idx in by.items():
            ranks[r] = everything if len(idx) == rc.n else _fold(_subset(rc, idx))
    pairs: list[tuple[float, float]] = []
    if rc.family == "sglang":
        al, ar = rc.values["accept_len"], rc.values["accept_rate"]
        pairs = [(al[i], ar[i]) for i in range(min(rc.n, MAX_SAMPLES)) if al[i] == al[i] and ar[i] == ar[i]]
    return Reduced(rc.family, rc.n, everything, ranks, pairs, rc.rate_definition)


def apply_reduced(stats: SourceStats, red: Reduced, drop_timestamps: bool = False) -> None:
    """Merge ``red`` into the current segment (and the totals) of ``stats``."""
    if not red.n:
        return
    seg = stats.current
    stats.records += red.n
    groups: list[tuple[MetricSet, Folded]] = [(stats.total, red.all), (seg.all, red.all)]
    for r, f in red.ranks.items():
        m = seg.rank_set(r)
        if m is not None:
            groups.append((m, f))
    for ms, f in groups:
        _apply(ms, f, drop_timestamps)
    if red.rate_pairs:
        seg.add_rate_pairs(red.rate_pairs)
    if red.rate_definition is not None and seg.printed_def is None:
        seg.printed_def = red.rate_definition
    if not seg.config.family:
        seg.config.family = red.family
        seg.add_rate_pairs(())  # the rate definition is read again with the family known


def add_columns(stats: SourceStats, rc: RecordColumns) -> None:
    """The records of ``rc`` into ``stats``: the same as ``stats.feed`` of those records."""
    if rc.n:
        apply_reduced(stats, reduce_columns(rc))


def split_first(rc: RecordColumns) -> tuple[RecordColumns, RecordColumns]:
    """(the first record, the others) of ``rc``, as two runs."""
    return _slice(rc, 0, 1), _slice(rc, 1, rc.n)


def _slice(rc: RecordColumns, start: int, stop: int) -> RecordColumns:
    return RecordColumns(
        rc.family,
        rc.kind,
        max(0, stop - start),
        {k: c[start:stop] for k, c in rc.values.items()},
        rc.ranks[start:stop] if rc.ranks is not None else None,
        rc.per_position[start:stop] if rc.per_position is not None else None,
        rc.rate_definition,
        rc.cumulative,
        rc.line_nos[start:stop] if rc.line_nos is not None else None,
    )


def _subset(rc: RecordColumns, idx: list[int]) -> RecordColumns:
    values = {k: array("d", [c[i] for i in idx]) for k, c in rc.values.items()}
    pp = [rc.per_position[i] for i in idx] if rc.per_position is not None else None
    return RecordColumns(rc.family, rc.kind, len(idx), values, None, pp, rc.rate_definition, rc.cumulative)


def _series(f: Folded, name: str, xs: list[float], ws: Weights, complete: bool) -> None:
    """``Series.add(x, w)`` of each present x: one chunk at C speed when every value and weight
    is there (``complete``: a weight column without a gap), else the pairs, added one by one."""
    if math.isfinite(sum(xs)):  # every value there and finite (an overflow only means the slow way)
        if ws is None or complete:  # (ColumnChunk.of leaves out weights <= 0 or inf, as add does)
            f.chunks[name] = ColumnChunk.of(xs, ws)  # type: ignore[arg-type]
            return
        full = [w for w in ws if w is not None]
        if len(full) == len(xs) and math.isfinite(sum(full)) and min(full) > 0:
            f.chunks[name] = ColumnChunk.of(xs, full)
            return
    f.pairs[name] = [(x, ws[i] if ws is not None else None) for i, x in enumerate(xs) if x == x]


def _total(col: list[float]) -> int:
    s = sum(col)
    if s == s:
        return int(math.fsum(col))
    return int(math.fsum(x for x in col if x == x))


def _fold(rc: RecordColumns) -> Folded:
    """MetricSet.add of each record of ``rc``, reduced. The columns are made lists once: every
    pass over a list reuses its float objects (an array boxes each value again on each pass)."""
    f = Folded(rc.n)
    used = (*_SERIES, "num_drafts", "running_req", "drafted", "accepted")
    v: dict[str, list[float] | None] = {
        k: None if _absent(c) else c.tolist() for k, c in rc.values.items() if k in used
    }
    nd, run, dr = v["num_drafts"], v["running_req"], v["drafted"]

    def present(col: list[float] | None) -> bool:
        return col is not None and not math.isnan(sum(col))

    # Record.weight: num_drafts, else #running-req, else drafted tokens, else none
    w: Weights
    if nd is not None and present(nd):
        w = nd
    elif nd is None and run is not None and present(run):
        w = run
    elif nd is None and run is None:
        w = None if dr is None else [x if x == x else None for x in dr]
    else:
        w = [
            a if a == a else (b if b == b else (c if c == c else None))
            for a, b, c in zip(*(col or [math.nan] * rc.n for col in (nd, run, dr)))
        ]
    # accept rate: weighted by drafted tokens when printed and non-zero (vLLM, llama.cpp)
    wr: Weights
    if dr is not None and present(dr) and min(dr) > 0:
        wr = dr
    elif dr is None:
        wr = w
    else:
        wr = [d if d == d and d else (w[i] if w is not None else None) for i, d in enumerate(dr)]
    nd_w: Weights = nd if nd is None or present(nd) else [x if x == x else None for x in nd]
    complete = [x for x in (nd, run, dr) if x is not None and present(x)]
    for name, ws in zip(_SERIES, (w, wr, None, None, nd_w, nd_w)):
        col = v[name]
        if col is not None:
            _series(f, name, col, ws, any(ws is c for c in complete))
    if not rc.cumulative:
        f.accepted = _total(v["accepted"]) if v["accepted"] is not None else 0
        f.drafted = _total(dr) if dr is not None else 0
    if rc.per_position is not None and nd is not None:
        f.pos, f.pos_w = _positions(rc.per_position, nd)
    ts = rc.values["timestamp"]
    first = next((x for x in ts if x == x), None)  # from each end: the first value, as a rule
    if first is not None:
        f.first_ts = first
        f.last_ts = next(x for x in reversed(ts) if x == x)
    return f


def _positions(per_position: list[tuple[float, ...] | None], nd: list[float]) -> tuple[list[float], float]:
    """Σ rate_i · num_drafts per position and Σ num_drafts, over the records that count (as
    MetricSet.add: a per-position list, num_drafts > 0, at most MAX_POSITIONS values)."""
    first = per_position[0] if per_position else None
    k = len(first) if first else 0
    if (
        0 < k <= MAX_POSITIONS
        and not math.isnan(sum(nd))
        and min(nd) > 0
        and per_position.count(None) == 0
        and min(map(len, per_position)) == max(map(len, per_position)) == k  # type: ignore[arg-type]
    ):
        cols = list(zip(*per_position))
        if all(math.isfinite(x) for c in cols for x in (min(c), max(c))):
            return [math.fsum(map(mul, c, nd)) for c in cols], math.fsum(nd)
    sums: list[float] = []
    weight = 0.0
    for pp, d in zip(per_position, nd):
        if not pp or not (d == d and d) or len(pp) > MAX_POSITIONS:
            continue
        if len(sums) < len(pp):
            sums.extend([0.0] * (len(pp) - len(sums)))
        for j, x in enumerate(pp):
            if math.isfinite(x):
                sums[j] += x * d
        weight += d
    return sums, weight


def _apply(ms: MetricSet, f: Folded, drop_timestamps: bool) -> None:
    ms.records += f.n
    for name in _SERIES:
        s: Series = getattr(ms, name)
        c = f.chunks.get(name)
        if c is not None:
            s.merge_chunk(c)
        for x, w in f.pairs.get(name, ()):
            s.add(x, w)
    ms.accepted += f.accepted
    ms.drafted += f.drafted
    if f.pos_w:
        if len(ms._pos_sums) < len(f.pos):
            ms._pos_sums.extend([0.0] * (len(f.pos) - len(ms._pos_sums)))
        for j, x in enumerate(f.pos):
            ms._pos_sums[j] += x
        ms._pos_weight += f.pos_w
    if f.first_ts is not None and not drop_timestamps:
        if ms.first_ts is None:
            ms.first_ts = f.first_ts
        ms.last_ts = f.last_ts
