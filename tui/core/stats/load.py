"""Acceptance by load: accept len in batch-size strata, and an A/B compared within them.

Acceptance falls as the batch grows (more requests share each verify step), so two servers that
ran at different loads differ even with identical drafts. Records keep their batch size
(``running_req``: SGLang ``#running-req``, vLLM ``Running:`` of the paired engine line).

**Bins.** Each segment keeps, per half-octave bin of ``running_req`` (edges 0, 1, 2, 3, 4, 6, 8,
12, 16, 24, 32, 48, …), a streaming :class:`Series` of the printed accept len and a pooled
:class:`RatioSeries` (``1 + Σaccepted/Σdrafts``) where lines print counts: at most ~2·log2(max
batch) bins, each in bounded memory. A record without a batch size stays out of the bins (it
still counts everywhere else).

**Strata** are made at output time: consecutive bins are merged until each stratum holds at
least :data:`MIN_STRATUM` records (a short remainder joins the stratum before it). A merged
stratum's value is the record-weighted combination of its bins, ``Σ wᵢ·vᵢ`` with ``wᵢ = nᵢ/N``,
and its variance ``Σ wᵢ²·seᵢ²`` (bins are disjoint stretches of the log); a bin too small for an
interval of its own (fewer than 3 values) takes the largest per-record spread ``seⱼ·√nⱼ`` of the
stratum's other bins. Degrees of freedom: Welch–Satterthwaite over the bins.

**Load-adjusted A/B**: :mod:`tui.core.stats.load_compare`.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import itemgetter

from tui.core.stats.checks import all_nan
from tui.core.stats.compare import MEAN_OF_LINES as LINES
from tui.core.stats.compare import POOLED
from tui.core.stats.estimate import Estimate
from tui.core.stats.influence import TimeBins
from tui.core.stats.pooled import RatioChunk, RatioSeries
from tui.core.stats.series import ColumnChunk, Series

MIN_STRATUM = 30  # records per stratum in a segment's by_batch_size
MIN_COMMON = 10  # records per side in a stratum of the load-adjusted comparison (load_compare.py)
SHORT_RUN = 16  # runs up to this long go in value by value


def _edges() -> list[float]:
    e = [0.0, 1.0, 2.0, 3.0]
    x = 4
    while x < 1 << 24:
        e += [float(x), float(x + x // 2)]
        x *= 2
    return e


EDGES = _edges()


def bin_of(r: float) -> int:
    """The half-octave bin of a batch size (-1: none, or not a count)."""
    if not r >= 0.0:  # NaN too
        return -1
    return bisect_right(EDGES, r) - 1


def bin_range(i: int) -> tuple[int, int | None]:
    """[lo, hi] batch sizes of bin ``i`` (hi None: open-ended)."""
    lo = int(EDGES[i])
    return lo, (int(EDGES[i + 1]) - 1 if i + 1 < len(EDGES) else None)


class _BinCache(dict):
    def __missing__(self, r: float) -> int:
        b = bin_of(r)
        if r == r and len(self) < 4096:
            self[r] = b
        return b


_BINS = _BinCache()


class _Bin:
    __slots__ = ("lines", "pooled")

    def __init__(self, hi: float = math.inf) -> None:
        self.lines = Series(window=1)
        self.lines.set_bounds(1.0, hi)
        self.pooled = RatioSeries(1.0)
        self.pooled.set_bounds(1.0, hi)

    @property
    def n(self) -> int:
        return max(self.lines.n, self.pooled.n)

    def estimate(self, estimator: str) -> Estimate:
        return self.pooled.estimate() if estimator == POOLED else self.lines.estimate()

    def count(self, estimator: str) -> int:
        return self.pooled.n if estimator == POOLED else self.lines.n


@dataclass(slots=True)
class Places:
    """Where a bin's values sit in their run: the record indices (int32, ascending) of the values
    of its lines chunk and of its count pairs."""

    lines: Sequence[int]
    pooled: Sequence[int]


BinChunks = dict[int, tuple[ColumnChunk | None, RatioChunk | None, Places]]


def bin_chunks(v: Mapping[str, Sequence[float]], cumulative: bool) -> BinChunks:
    """A run's accept len values (and count pairs) split by batch-size bin, reduced to chunks
    with their places in the run (:class:`Places`): a pure function of the checked values, so
    worker processes can do it (stats/precompute.py)."""
    run = v["running_req"]
    n = len(run)
    out: BinChunks = {}
    if not n or all_nan(run):  # (no batch sizes printed: every record's bin is -1)
        return out
    bins = list(map(_BINS.__getitem__, run))
    lo, hi = min(bins), max(bins)
    if hi < 0:
        return out
    order = list(range(n)) if lo == hi else sorted(range(n), key=bins.__getitem__)
    pick = itemgetter(*order) if n > 1 else (lambda s: (s[0],))
    sb = pick(bins)
    al = pick(v["accept_len"])
    counts = not cumulative and not all_nan(v["accepted"])
    acc = pick(v["accepted"]) if counts else ()
    nd = pick(v["num_drafts"]) if counts else ()
    start = 0
    while start < n:
        b = sb[start]
        end = bisect_right(sb, b, start) if lo != hi else n
        if b >= 0:
            idx = array("i", order[start:end])  # int32, as the native reduction gives them
            xs = al[start:end]
            at_lines = idx
            if sum(xs) != sum(xs):  # some not printed
                keep = [x == x for x in xs]
                xs = list(compress(xs, keep))
                if xs:  # (no values: no chunk, and the places stay those of the bin, as in C)
                    at_lines = array("i", compress(idx, keep))
            lines = ColumnChunk.of(xs) if xs else None
            pooled = None
            at_pooled = idx
            if counts:
                sel = [k for k, (a, d) in enumerate(zip(acc[start:end], nd[start:end])) if d > 0 and a == a]
                if sel:
                    pooled = RatioChunk.of([acc[start + k] for k in sel], [nd[start + k] for k in sel])
                    if len(sel) < end - start:
                        at_pooled = array("i", [idx[k] for k in sel])
            if lines is not None or pooled is not None:
                out[b] = (lines, pooled, Places(at_lines, at_pooled))
        start = end
    return out


class LoadStrata:
    """A segment's accept len per batch-size bin (see the module text)."""

    __slots__ = ("bins", "hi", "time")

    def __init__(self) -> None:
        self.bins: dict[int, _Bin] = {}
        self.hi = math.inf  # accept len ≤ k + 1 (the segment's depth, when known)
        self.time = TimeBins()  # the bins' sums per batch of records in log order (influence.py)

    def add(self, v: dict[str, Sequence[float]], cumulative: bool, chunks: BinChunks | None = None) -> None:
        """Checked values of a run of records (NaN: not printed), in line order; ``chunks``: its
        :func:`bin_chunks`, when a worker made them already."""
        run = v["running_req"]
        counts = not cumulative and not all_nan(v["accepted"])
        if chunks is not None or len(run) > SHORT_RUN:
            chunks = chunks if chunks is not None else bin_chunks(v, cumulative)
            self.merge(chunks)
            self.time.add_chunks(len(run), chunks)
            return
        if len(run):
            self.time.add_run(
                list(map(_BINS.__getitem__, run)),
                v["accept_len"],
                v["accepted"] if counts else None,
                v["num_drafts"] if counts else None,
            )
        # a short run (live logs, a few lines at a time): value by value, no sorting or chunks
        al = v["accept_len"]
        acc, nd = v["accepted"], v["num_drafts"]
        for i, r in enumerate(run):
            b = _BINS[r]
            if b < 0:
                continue
            cell = self.bins.get(b)
            if cell is None:
                cell = self.bins[b] = _Bin(self.hi)
            x = al[i]
            if x == x:
                cell.lines.add(x)
            if counts and nd[i] > 0 and acc[i] == acc[i]:
                cell.pooled.add_many((acc[i],), (nd[i],))

    def merge(self, chunks: BinChunks) -> None:
        """Fold in :func:`bin_chunks` of a run (possibly built in a worker process); the run's
        place in time is :meth:`add`'s."""
        for b, (lines, pooled, _) in chunks.items():
            cell = self.bins.get(b)
            if cell is None:
                cell = self.bins[b] = _Bin(self.hi)
            if lines is not None:
                cell.lines.merge_chunk(lines)
            if pooled is not None:
                cell.pooled.merge(pooled)

    def set_depth(self, k: int | None) -> None:
        hi = self.hi = math.inf if not k else k + 1.0
        for c in self.bins.values():
            c.lines.set_bounds(1.0, hi)
            c.pooled.set_bounds(1.0, hi)

    def estimator(self) -> str:
        return POOLED if any(c.pooled.n for c in self.bins.values()) else LINES

    def to_list(self, estimator: str | None = None) -> list[dict]:
        """``by_batch_size``: strata of at least MIN_STRATUM records, in batch-size order."""
        est = estimator or self.estimator()
        keys = [b for b in sorted(self.bins) if self.bins[b].count(est)]
        groups: list[list[int]] = []
        for b in keys:
            if groups and sum(self.bins[x].count(est) for x in groups[-1]) < MIN_STRATUM:
                groups[-1].append(b)
            else:
                groups.append([b])
        if len(groups) > 1 and sum(self.bins[x].count(est) for x in groups[-1]) < MIN_STRATUM:
            last = groups.pop()
            groups[-1] += last
        out = []
        for g in groups:
            e = combine([self.bins[b].estimate(est) for b in g])
            ci = e.ci95()
            out.append(
                {
                    "running_req": [bin_range(g[0])[0], bin_range(g[-1])[1]],
                    "n": e.n,
                    "accept_len": {
                        "mean": e.value,
                        "ci95": list(ci) if ci else None,
                        "effective_n": e.ess,
                        "estimator": est,
                    },
                }
            )
        return out


def combine(es: Sequence[Estimate]) -> Estimate:
    """The record-weighted combination of disjoint bins' estimates (see the module text)."""
    es = [e for e in es if e.n and e.value is not None]
    n = sum(e.n for e in es)
    lo = min((e.lo for e in es), default=-math.inf)
    hi = max((e.hi for e in es), default=math.inf)
    if not es:
        return Estimate(None, None, None, 0, None, None, None, "none (no values)", lo, hi)
    value = math.fsum(e.n * e.value for e in es if e.value is not None) / n
    spread = max((e.se * math.sqrt(e.n) for e in es if e.se is not None), default=None)
    if len(es) == 1:
        e = es[0]
        return Estimate(e.value, e.se, e.df, e.n, e.ess, e.indep, e.phi, e.method, lo, hi)
    if spread is None:
        return Estimate(value, None, None, n, None, None, None, "none (fewer than 3 values per bin)", lo, hi)
    var = 0.0
    sat = 0.0
    ess = 0.0
    for e in es:
        w = e.n / n
        se, df = (e.se, e.df) if e.se is not None and e.df is not None else (spread / math.sqrt(e.n), 1.0)
        vi = w * w * se * se
        var += vi
        sat += vi * vi / max(df, 1.0)
        ess += e.ess if e.ess is not None else min(1.0, e.n)
    df = var * var / sat if sat > 0 else math.inf
    return Estimate(
        value, math.sqrt(var), max(1.0, df), n, min(float(n), ess), None, None, "strata of batch size", lo, hi
    )
