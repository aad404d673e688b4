"""The expensive half of :meth:`SourceStats.add_columns`, done where the columns are built.

``summary`` scans large files in worker processes; if the statistics did all their work in the
main process, it would become the bottleneck. :func:`precompute` (a pure function of the
columns, picklable result) runs the per-value check with the bounds that need no knowledge of
the segment, and reduces the values to what every statistic merges. ``add_columns`` then only
merges — provided the segment's own bounds hold (accept len ≤ k + 1, checked on the maximum), and
only for SGLang runs, whose drafts need no completion from k; otherwise it checks again itself.
The result is the same either way (tests/test_pooled.py).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from tui.core.columns import RecordColumns
from tui.core.stats.checks import Refused, clean
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
    load: BinChunks | None = None  # accept len by batch-size bin (stats/load.py)


def precompute(cols: RecordColumns) -> None:
    """Check and reduce ``cols`` now (in a worker process, say); the result rides along in
    ``cols.extra`` to :meth:`SourceStats.add_columns`. Only SGLang runs gain from it."""
    if cols.family != "sglang" or cols.n == 0:
        return
    v, refused, full = clean(cols, None)
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
            by_rank[rank] = prepare(len(idx), sub, cols.family, cols.cumulative, None)
    c = p.chunks["accept_len"]
    max_al = c.max if c is not None else 1.0
    cols.extra[PRECOMPUTED] = Precomputed(
        v,
        refused,
        full,
        p,
        by_rank,
        max_al,
        bin_chunks(v, cols.cumulative),
    )
