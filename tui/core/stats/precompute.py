"""The expensive half of :meth:`SourceStats.add_columns`, done where the columns are built.

``summary`` scans large files in worker processes; if the statistics did all their work in the
main process, it would become the bottleneck. :func:`precompute` (a pure function of the
columns, picklable result) runs the per-value check with the bounds that need no knowledge of
the segment, and reduces the values to what every statistic merges. ``add_columns`` then only
merges — provided nothing was refused (a refusal is quoted with its line, which only the
process that owns the statistics can number) and either the run needs nothing from the segment
(:func:`depth_free`) or it is an SGLang run (its drafts need no completion from k) within the
segment's own bounds (accept len ≤ k + 1, checked on the maximum); otherwise it checks again
itself. The result is the same either way (tests/test_pooled.py).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from tui.core.columns import RecordColumns
from tui.core.stats.checks import Refused, all_nan, clean
from tui.core.stats.load import BinChunks, bin_chunks
from tui.core.stats.metrics import Prepared, prepare

PRECOMPUTED = "stats.precomputed"  # the key in RecordColumns.extra


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
    if cols.family == "sglang" or cols.cumulative or cols.per_position is None:
        return False
    if not all(cols.per_position) or not all_nan(cols.values["accept_len_derived"]):
        return False
    nd, dr = cols.values["num_drafts"], cols.values["drafted"]
    if not math.isnan(sum(nd)):  # every drafts count there (the usual case, at C speed)
        return True
    return not any(x != x and y == y for x, y in zip(nd, dr))


def precompute(cols: RecordColumns) -> None:
    """Check and reduce ``cols`` now (in a worker process, say); the result rides along in
    ``cols.extra`` to :meth:`SourceStats.add_columns`. SGLang runs, and the runs whose records
    need nothing from the segment (:func:`depth_free`)."""
    if cols.n == 0:
        return
    free = depth_free(cols)
    if cols.family != "sglang" and not free:
        return
    v, refused, full = clean(cols, None)
    if refused.total():  # rare: checked again where the line numbers and the lines' text are known
        return
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
    c = p.chunks["accept_len"]
    max_al = c.max if c is not None else 1.0
    cols.extra[PRECOMPUTED] = Precomputed(
        v,
        refused,
        full,
        p,
        by_rank,
        max_al,
        free,
        bin_chunks(v, cols.cumulative),
    )
