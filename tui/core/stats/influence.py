"""The variance of a load-adjusted difference from per-record influence values in log order.

The load-adjusted A/B (:mod:`tui.core.stats.load`) compares two sides within batch-size strata:
``T = Σₛ wₛ·mₛ`` per side, ``mₛ`` the side's accept len in stratum s (a mean of printed values,
or ``1 + ΣAₛ/ΣDₛ`` for counts) and ``wₛ`` a fixed weight. The strata of one side interleave in
time and share its slow noise (the load and the traffic mix move together), so their errors are
correlated and a sum of stratum variances is too small. What is right is the variance of ``T``'s
linearisation, ``T − E[T] ≈ Σᵢ ψᵢ`` over the side's records in log order, with the influence of
record i in stratum s

    ψᵢ = wₛ/nₛ · (xᵢ − mₛ)              (mean of printed values, nₛ values in s)
    ψᵢ = wₛ/ΣDₛ · (Aᵢ − Rₛ·Dᵢ)          (pooled counts, Rₛ = ΣAₛ/ΣDₛ)

and ψᵢ = 0 for a record outside the compared strata. ``Σψ`` is a sum of an autocorrelated
series, so its variance comes from the same long-run variance estimator as every other interval
(:func:`tui.core.stats.lrv.long_run_variance` on batch means of ψ, a longer level taken whenever
its variance is larger: :data:`SELECT`).

ψ needs ``mₛ``, known only at the end; but a batch's sum of ψ is ``Σₛ wₛ/nₛ·(Xⱼₛ − Cⱼₛ·mₛ)``,
so it is enough to keep, per batch of consecutive records and per bin, the sum of the values and
their count (Σx, count, ΣA, ΣD): :class:`TimeBins`, on the batching of
:class:`tui.core.stats.estimate.Batches` (at most ``UNITS`` batches, bounded memory whatever the
log's length). Channel 0 counts every record (a record without a batch size too: its ψ is 0, but
it takes its place in time).
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, compress
from operator import add

from tui.core.stats.estimate import Batches
from tui.core.stats.lrv import Lrv, long_run_variance

X, C, A, D = range(4)  # the channels of a bin, after channel 0
WIDTH = 4
UNITS = 256  # batches kept: 128–256 once the records outnumber them (the long-run variance needs
# no more; each batch is read per bin at its boundaries, so fewer cost less)
# a longer batch level is taken whenever its variance is larger (lrv.SELECT_P asks it to beat its
# own 99% noise): a side that visits the compared batch sizes only now and then has an influence
# series that is mostly zeros, where the AR(1) fit on short batches underestimates (calibration,
# B at 4× A's load, φ 0.9: 10% A/A false with the 99% rule, 6.5% with this one, 2.25% with the
# floor of load.py)
SELECT = 0.0


class _Where:
    """The places (record indices in a run, ascending) of one bin's values, with the number of
    them before each index asked for; the answers for the last few slices are kept, since the
    running sums of the values and their count are read at the same indexes one after the other."""

    __slots__ = ("pos", "_seen")

    def __init__(self, pos: Sequence[int] | None) -> None:
        self.pos = pos  # None: every record of the run
        self._seen: dict[tuple[int, int, int], list[int]] = {}

    def before(self, k: int) -> int:
        return k if self.pos is None else bisect_left(self.pos, k)

    def many(self, key: tuple[int, int, int]) -> list[int]:
        js = self._seen.get(key)
        if js is None:
            if len(self._seen) >= 4:  # a batch step reads two slices per channel: keep a few
                self._seen.clear()
            start, stop, step = key
            ks = range(start, stop, step)
            pos = self.pos
            # Batches reads p[i + size : last + 1 : size], then p[i : last : size]: after its
            # first index, the second slice asks what the first did
            ahead = self._seen.get((start + step, stop + 1, step)) if step > 0 and ks else None
            if pos is None:
                js = list(ks)
            elif ahead is not None:
                js = [bisect_left(pos, start), *ahead[: len(ks) - 1]]
            else:
                js = [bisect_left(pos, k) for k in ks]
            self._seen[key] = js
        return js


class _Prefix:
    """Running sums at every record index of a run (0 … n) of one bin's values (``cum``: the
    running sums of its values; None: their count), indexed and sliced as a list of n + 1 sums
    would be."""

    __slots__ = ("where", "cum", "n")

    def __init__(self, n: int, where: _Where, cum: Sequence[float] | None) -> None:
        self.n, self.where, self.cum = n, where, cum

    def __len__(self) -> int:
        return self.n + 1

    def __getitem__(self, k):
        cum = self.cum
        if isinstance(k, slice):
            js = self.where.many(k.indices(self.n + 1))
            return [float(j) for j in js] if cum is None else [cum[j] for j in js]
        j = self.where.before(k)
        return float(j) if cum is None else cum[j]


def _at(pos: Sequence[int] | None, ks: Sequence[int]) -> list[int]:
    """For each record index of ``ks``, how many of the places ``pos`` come before it (None:
    every record is one)."""
    return list(ks) if pos is None else [bisect_left(pos, k) for k in ks]


class _Zero:
    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n + 1

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [0.0] * len(range(*k.indices(self.n + 1)))
        return 0.0


class TimeBins:
    """Per batch of consecutive records (log order), each bin's Σx, count, ΣA and ΣD."""

    __slots__ = ("group", "batches", "records")

    def __init__(self) -> None:
        self.group: dict[int, int] = {}  # bin → its first channel
        self.batches = Batches(1, UNITS)  # channel 0: records
        self.records = 0

    def _channel(self, b: int) -> int:
        ch = self.group.get(b)
        if ch is None:  # a new bin: zeros for the records before it
            ch = self.group[b] = len(self.batches.sums)
            size = len(self.batches.sums[0])
            for _ in range(WIDTH):
                self.batches.sums.append(array("d", bytes(8 * size)))
                self.batches.cur.append(0.0)
        return ch

    def _coarsen(self, n: int) -> None:
        """Before ``n`` more records: batches as long as they will be at the end of them (the
        smallest doubling of the batch size that keeps the whole batches below ``UNITS``), so a
        long run is read at that size once instead of at every size on the way. Batches end at
        multiples of their size from the first record, so joining pairs gives the same batches
        that :class:`Batches` would have halved to (an odd last batch joins the open one)."""
        bt = self.batches
        total = self.records + n
        size = bt.size
        while total // size >= UNITS:
            size *= 2
        while bt.size < size:
            if len(bt.sums[0]) % 2:
                for c, arr in enumerate(bt.sums):
                    bt.cur[c] += arr.pop()
                bt.cur_n += bt.size
            bt.sums = [array("d", map(add, arr[0::2], arr[1::2])) for arr in bt.sums]
            bt.size *= 2

    def add_run(
        self,
        bins: Sequence[int],
        x: Sequence[float],
        acc: Sequence[float] | None,
        nd: Sequence[float] | None,
    ) -> None:
        """A run of records in log order: their bins (-1: none), accept len (NaN: not printed) and,
        when the run prints counts, accepted and drafts."""
        n = len(bins)
        if not n:
            return
        for b in set(bins):
            if b >= 0:
                self._channel(b)
        self._coarsen(n)
        prefixes: list = [None] * len(self.batches.sums)
        prefixes[0] = _Prefix(n, _Where(None), None)
        one = min(bins) == max(bins)
        for b, ch in self.group.items():
            if one and bins[0] != b:
                pos: Sequence[int] | None = ()
            elif one:
                pos = None
            else:
                pos = list(compress(range(n), map(b.__eq__, bins)))
            if pos is not None and not pos:
                for k in range(WIDTH):
                    prefixes[ch + k] = _Zero(n)
                continue
            xs = x if pos is None else [x[i] for i in pos]
            if math.isnan(math.fsum(xs)):  # some not printed: only the printed ones
                keep = [v == v for v in xs]
                px = list(compress(range(n) if pos is None else pos, keep))
                xs = list(compress(xs, keep))
            else:
                px = pos  # type: ignore[assignment]
            wx = _Where(px)
            prefixes[ch + X] = _Prefix(n, wx, list(accumulate(xs, initial=0.0)))
            prefixes[ch + C] = _Prefix(n, wx, None)
            if acc is not None and nd is not None:
                idx = range(n) if pos is None else pos
                pairs = [(i, acc[i], nd[i]) for i in idx if nd[i] > 0 and acc[i] == acc[i]]
                pp = [i for i, _, _ in pairs]
                wp = _Where(pp)
                prefixes[ch + A] = _Prefix(n, wp, list(accumulate((a for _, a, _ in pairs), initial=0.0)))
                prefixes[ch + D] = _Prefix(n, wp, list(accumulate((d for _, _, d in pairs), initial=0.0)))
            else:
                prefixes[ch + A] = prefixes[ch + D] = _Zero(n)
        self.batches.add_prefix(prefixes)
        self.records += n

    def add_chunks(self, n: int, chunks: Mapping[int, tuple]) -> None:
        """A run of ``n`` records by its :func:`tui.core.stats.load.bin_chunks` (or the native
        equivalent): each bin's running sums (the chunks') at its records' places, so nothing
        here goes record by record."""
        if not n:
            return
        for b in chunks:
            self._channel(b)
        self._coarsen(n)
        if self._add_at_boundaries(n, chunks):
            return
        prefixes: list = [_Zero(n)] * len(self.batches.sums)
        prefixes[0] = _Prefix(n, _Where(None), None)
        for b, (lines, pooled, places) in chunks.items():
            ch = self.group[b]
            if lines is not None:
                wx = _Where(places.lines)
                prefixes[ch + X] = _Prefix(n, wx, lines.prefix)
                prefixes[ch + C] = _Prefix(n, wx, None)
            if pooled is not None:
                wp = wx if places.pooled is places.lines and lines is not None else _Where(places.pooled)
                prefixes[ch + A] = _Prefix(n, wp, pooled.num_prefix)
                prefixes[ch + D] = _Prefix(n, wp, pooled.den_prefix)
        self.batches.add_prefix(prefixes)
        self.records += n

    def _add_at_boundaries(self, n: int, chunks: Mapping[int, tuple]) -> bool:
        """:meth:`add_chunks` read where batches close alone (:meth:`Batches.boundaries`): the
        running sums of every channel at those few record indices (one bisect per bin and
        boundary), their differences added by :meth:`Batches.add_steps` (bit for bit the sums of
        the prefix path). False (nothing done) where a batch would be halved meanwhile, which
        :meth:`_coarsen` rules out."""
        bt = self.batches
        plan = bt.boundaries(n)
        if plan is None:
            return False
        ks = plan.ks
        zeros = [0.0] * (len(ks) - 1)
        steps: list[list[float]] = [zeros] * len(bt.sums)
        steps[0] = [float(b - a) for a, b in zip(ks, ks[1:])]  # channel 0: records
        for b, (lines, pooled, places) in chunks.items():
            ch = self.group[b]
            if lines is not None:
                at = _at(places.lines, ks)
                cum = lines.prefix
                steps[ch + X] = [cum[j] - cum[i] for i, j in zip(at, at[1:])]
                steps[ch + C] = [float(j) - float(i) for i, j in zip(at, at[1:])]
            if pooled is not None:
                at = _at(places.pooled, ks)
                num, den = pooled.num_prefix, pooled.den_prefix
                steps[ch + A] = [num[j] - num[i] for i, j in zip(at, at[1:])]
                steps[ch + D] = [den[j] - den[i] for i, j in zip(at, at[1:])]
        bt.add_steps(plan, steps)
        self.records += n
        return True

    def totals(self, b: int) -> tuple[float, float, float, float] | None:
        """(Σx, count, ΣA, ΣD) of a bin over every record added (None: the bin never occurred)."""
        ch = self.group.get(b)
        if ch is None:
            return None
        bt = self.batches
        return tuple(math.fsum(bt.sums[ch + k]) + bt.cur[ch + k] for k in range(WIDTH))  # type: ignore[return-value]


@dataclass(slots=True)
class SideVariance:
    var: float  # variance of Σₛ wₛ·mₛ
    df: float
    indep: float  # effectively independent batch means
    lrv: Lrv


def side_variance(
    tb: TimeBins, weights: Mapping[int, float], pooled: bool, select: float = SELECT
) -> SideVariance | None:
    """The variance of ``Σₛ wₛ·mₛ`` for one side from its influence values (module text);
    ``weights``: bin → wₛ of the compared strata. None: fewer than 3 whole batches."""
    bt = tb.batches
    m = bt.count
    if m < 3:
        return None
    units = [0.0] * m
    for b, w in weights.items():
        tot = tb.totals(b)
        ch = tb.group.get(b)
        if tot is None or ch is None:
            continue
        sx, cnt, sa, sd = tot
        if pooled:
            if sd <= 0.0:
                continue
            coef, level, num, den = w / sd, sa / sd, bt.sums[ch + A], bt.sums[ch + D]
        else:
            if cnt <= 0.0:
                continue
            coef, level, num, den = w / cnt, sx / cnt, bt.sums[ch + X], bt.sums[ch + C]
        for j in range(m):
            units[j] += coef * (num[j] - level * den[j])
    size = bt.size
    r = long_run_variance([u / size for u in units], select=select)
    if r is None:
        return None
    n = float(tb.records)
    return SideVariance(r.var * n * n, max(1.0, r.indep - 1.0), r.indep, r)
