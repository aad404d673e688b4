"""The expensive half of :meth:`SourceStats.add_columns`, done where the columns are built.

``summary`` scans large files in several threads; if the statistics did all their work where
they are folded, that would become the bottleneck. :func:`precompute` (a pure function of the
columns) runs the per-value check with the bounds that need no knowledge of the segment, and
reduces the values to what every statistic merges; for a run in the common form the native
reduction (``_reduce.c``, without the GIL for its checks) gives the same result as the Python
code, bit for bit. ``add_columns`` then only merges — provided nothing was refused (a refusal is
quoted with its line, which only the reader that folds can number) and either the run needs
nothing from the segment (:func:`depth_free`) or its family's drafts need no completion from k
(``Format.drafts_from_depth`` False: SGLang) within the segment's own bounds (accept len ≤ k + 1, checked on the maximum);
otherwise it checks again itself. The result is the same either way (tests/unit/test_pooled.py).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from tui.core import native
from tui.core.formats import registry
from tui.core.model.columns import RecordColumns, doubles, flat_rows, row_lengths
from tui.core.stats.checks import ROW_BOUND, Refused, all_nan, clean, depth_bounded, ranges
from tui.core.stats.estimate import print_step
from tui.core.stats.load import BinChunks, Places, bin_chunks
from tui.core.stats.metrics import SERIES, Prepared, added_series, prepare
from tui.core.stats.pooled import RatioChunk
from tui.core.stats.series import ColumnChunk

# the optional native reduction (setup.py; off with SPECWATCH_NATIVE=0); same results, several times faster
_native = native.load("tui.core.stats._reduce")
_native_layout: tuple[str, ...] | None = None  # the checked columns the native code was given


def _layout() -> tuple[str, ...]:
    """The checked columns, in order, given to the native code whenever they changed (a quantity
    registered): their names and valid ranges, from the quantity registry (checks.ranges())."""
    global _native_layout
    r = ranges()
    names = tuple(r)
    if names != _native_layout and _native is not None:
        _native.layout(names, tuple(lo for lo, _ in r.values()), tuple(hi for _, hi in r.values()))
        _native_layout = names
    return names


@dataclass(slots=True)
class Precomputed:
    v: dict[str, Sequence[float]]
    refused: Refused
    full: dict[str, tuple[float, float]]
    prepared: Prepared
    by_rank: dict[str, Prepared] | None
    max_accept_len: float
    depth_free: bool  # neither the check nor the drafts count depend on the segment's k
    load: BinChunks | None = None  # accept len by batch-size bin (stats/load.py)


def depth_free(cols: RecordColumns) -> bool:
    """True for a run (vLLM V1, say) whose every record bounds its accept len by its own
    per-position list, prints no derived values and states its drafts wherever it states its
    drafted tokens: the segment's k changes nothing in it."""
    if not registry.get(cols.family).drafts_from_depth or cols.cumulative or cols.per_position is None:
        return False
    if 0 in row_lengths(cols.per_position) or not all_nan(cols.values["accept_len_derived"]):
        return False
    nd, dr = cols.values["num_drafts"], cols.values["drafted"]
    if not math.isnan(sum(nd)):  # every drafts count there (the usual case, at C speed)
        return True
    return not any(x != x and y == y for x, y in zip(nd, dr))


def precompute(cols: RecordColumns) -> Precomputed | None:
    """Check and reduce ``cols`` now (in a scanning thread, say); the result goes with the run to
    :meth:`SourceStats.add_columns` (its ``reduced`` argument). SGLang runs, the runs whose
    records need nothing from the segment (:func:`depth_free`) and, natively only, the others
    (the segment checks its k against them, :func:`fits`); None for a run with a refused value.
    A run in the common form is reduced by the native code (``_reduce.c``) when it is built,
    with the same result."""
    if cols.n == 0:
        return None
    free = depth_free(cols)
    if registry.get(cols.family).drafts_from_depth and not free:
        # the segment's k may bound this run or complete its drafts: only the native reduction
        # (cheap) is tried, and the segment takes it where its k changes nothing (fits)
        return _native_precompute(cols, free) if _native is not None else None
    pre = _native_precompute(cols, free) if _native is not None else None
    return _python_precompute(cols, free) if pre is None else pre


def fits(pre: Precomputed, k: int | None, drafts_from_depth: bool) -> bool:
    """Whether a run's reduction made without its segment is what the segment's own checks give,
    the segment's depth being ``k``: the run needs nothing from k (none known, or the run is
    :func:`depth_free`), or every value bounded by k + 1 is within it and, for a family whose
    missing drafts are drafted tokens / k, no drafts count is missing where drafted tokens are
    printed."""
    if pre.depth_free or k is None:
        return True
    if pre.max_accept_len > k + 1.0:  # (printed on some records only: its max over those)
        return False
    for name in depth_bounded() - {ROW_BOUND}:
        ext, col = pre.full.get(name), pre.v[name]
        if ext is None and all_nan(col):  # not printed (at C speed)
            continue
        if (ext[1] if ext is not None else max(x for x in col if x == x)) > k + 1.0:
            return False
    if not drafts_from_depth:
        return True
    nd, dr = pre.v["num_drafts"], pre.v["drafted"]
    return not math.isnan(sum(nd)) or all_nan(dr) or not any(x != x and y == y for x, y in zip(nd, dr))


def _python_precompute(cols: RecordColumns, free: bool) -> Precomputed | None:
    v, refused, full = clean(cols, None)
    if refused.total():  # rare: checked again where the line numbers and the lines' text are known
        return None
    p = prepare(cols.n, v, cols.family, cols.cumulative, cols.per_position, full)
    by_rank = None
    if cols.ranks is not None and cols.ranks.count(cols.ranks[0]) != cols.n:
        groups: dict[str, list[int]] = {}
        for i, r in enumerate(cols.ranks):
            if r is not None:
                groups.setdefault(r, []).append(i)
        by_rank = {}
        for rank, idx in groups.items():
            sub = {k: array("d", [c[i] for i in idx]) for k, c in v.items()}
            pp = None if cols.per_position is None else [cols.per_position[i] for i in idx]
            by_rank[rank] = prepare(len(idx), sub, cols.family, cols.cumulative, pp)
    load = bin_chunks(v, cols.cumulative)
    if not cols.cumulative:  # as the native path does: each series' print step is its whole column's
        steps = {name: print_step(v[name]) for name in (*SERIES, *(q.name for q in added_series()))}
        for prep in [p, *(by_rank or {}).values()]:
            for name, chunk in prep.chunks.items():
                if chunk is not None:
                    chunk.step = steps[name]
        for lines, _, _ in load.values():
            if lines is not None:
                lines.step = steps["accept_len"]
    c = p.chunks["accept_len"]
    max_al = c.max if c is not None else 1.0
    return Precomputed(v, refused, full, p, by_rank, max_al, free, load)


# -- native ----------------------------------------------------------------------------------
def _native_precompute(cols: RecordColumns, free: bool) -> Precomputed | None:
    """The native reduction of a run in the common form (see ``_reduce.c``); None when the run
    is not in that form (the Python code then reduces it, or leaves it to ``add_columns``)."""
    lib = _native
    if lib is None or cols.printed_nan or cols.cumulative:
        return None
    if any(not all_nan(cols.col(q.name)) for q in added_series()):
        return None  # the native code reduces the built-in series only: the Python code does these
    flat, k = None, 0
    if cols.per_position is not None:
        rows = flat_rows(cols.per_position)
        if rows is None:
            return None
        flat, k = rows
    rank_idx: bytes | None = None
    names: list[str] = []
    ranks = cols.ranks
    if ranks is not None and ranks.count(ranks[0]) != cols.n:
        if None in ranks:
            return None
        names = list(dict.fromkeys(cast("list[str]", ranks)))
        if len(names) > 255:
            return None
        index = {name: i for i, name in enumerate(names)}
        rank_idx = bytes(map(index.__getitem__, cast("list[str]", ranks)))
    checked = _layout()
    v: dict[str, Sequence[float]] = {name: cols.col(name) for name in checked}
    by_running = registry.get(cols.family).weight_by_running_req
    r = lib.precompute(by_running, tuple(v.values()), cols.n, flat, k, rank_idx, len(names))
    if r is None:
        return None
    full_t, main_t, by_rank_t, bins_t = r
    full = {name: ext for name, ext in zip(checked, full_t) if ext is not None}
    steps = {name: print_step(v[name]) for name in SERIES}  # the C code does not see print steps
    p = _prepared(main_t, steps)
    by_rank = None
    if by_rank_t is not None:
        by_rank = {name: _prepared(t, steps) for name, t in zip(names, by_rank_t)}
    load: BinChunks = {}
    for b, lines, pooled, pos in bins_t:
        at = array("i")  # int32 in C
        at.frombytes(pos)
        load[b] = (
            _column_chunk(lines, steps["accept_len"]) if lines is not None else None,
            _ratio_chunk(pooled) if pooled is not None else None,
            Places(at, at),  # the C code keeps every record of a bin (a run in the common form)
        )
    c = p.chunks["accept_len"]
    max_al = c.max if c is not None else 1.0
    return Precomputed(v, Refused(), full, p, by_rank, max_al, free, load)


def _column_chunk(t: tuple, step: float) -> ColumnChunk:
    c = ColumnChunk.__new__(ColumnChunk)
    c.__setstate__(t[:11] + (doubles(t[11]), t[12], step))
    return c


def _ratio_chunk(t: tuple) -> RatioChunk:
    n, num, den, num_prefix, den_prefix = t
    return RatioChunk(n, num, den, doubles(num_prefix), doubles(den_prefix))


def _prepared(t: tuple, steps: dict[str, float]) -> Prepared:
    n, chunks, pooled_len, pooled_rate, accepted, drafted, positions, first, last = t
    by_name = {
        name: _column_chunk(c, steps[name]) if c is not None else None for name, c in zip(SERIES, chunks)
    }
    # the added series (the native code reduces only runs where none is printed) as the Python
    # code names them: each with no chunk
    by_name.update((q.name, None) for q in added_series())
    return Prepared(
        n,
        by_name,
        _ratio_chunk(pooled_len) if pooled_len is not None else None,
        _ratio_chunk(pooled_rate) if pooled_rate is not None else None,
        int(accepted),
        int(drafted),
        positions,
        first,
        last,
    )
