"""Streaming statistics of one metric, in bounded memory.

A :class:`Series` keeps exact running aggregates (count, compensated sums, min, max, first,
last, weighted sums), a fixed-size window of recent values, an EWMA, and *batch means* for the
confidence interval.

Why batch means: consecutive log intervals are not independent (a long request spans many
``Decode batch`` lines, load drifts), so the textbook s/√n interval is too narrow. The values
are grouped into consecutive batches; their means are close to independent once batches are
long compared with the correlation time, and the CI is ``mean ± t(nb-1) · sd(batch means)/√nb``.
The batch size doubles whenever the batch count reaches ``2 · MIN_BATCHES`` (pairs are merged),
so memory stays O(batches) and there are always between MIN_BATCHES and 2·MIN_BATCHES batches
once n ≥ 2·MIN_BATCHES. With fewer values, each value is its own batch (the plain t interval).
"""

from __future__ import annotations

import math
from collections import deque
from itertools import accumulate
from collections.abc import Sequence
from operator import mul

from tui.core.stats.tdist import t975

MIN_BATCHES = 10  # batches are kept between 10 and 20: long batches, honest intervals
WINDOW = 50  # values in the recent window
EWMA_ALPHA = 0.1
MIN_N_FOR_CI = 3


class _Sum:
    """Neumaier-compensated float sum."""

    __slots__ = ("s", "c")

    def __init__(self) -> None:
        self.s = 0.0
        self.c = 0.0

    def add(self, x: float) -> None:
        s = self.s
        t = s + x
        if abs(s) >= abs(x):
            self.c += (s - t) + x
        else:
            self.c += (x - t) + s
        self.s = t

    @property
    def value(self) -> float:
        return self.s + self.c


class BatchMeans:
    __slots__ = ("size", "sums", "cur_sum", "cur_n")

    def __init__(self) -> None:
        self.size = 1
        self.sums: list[float] = []
        self.cur_sum = 0.0
        self.cur_n = 0

    def add(self, x: float) -> None:
        self.cur_sum += x
        self.cur_n += 1
        if self.cur_n == self.size:
            self._close()

    def add_prefix(self, prefix: Sequence[float]) -> None:
        """Add the values whose running sums are ``prefix`` (prefix[0] == 0)."""
        i, n = 0, len(prefix) - 1
        while i < n:
            take = min(self.size - self.cur_n, n - i)
            self.cur_sum += prefix[i + take] - prefix[i]
            self.cur_n += take
            i += take
            if self.cur_n == self.size:
                self._close()

    def _close(self) -> None:
        self.sums.append(self.cur_sum)
        self.cur_sum, self.cur_n = 0.0, 0
        if len(self.sums) >= 2 * MIN_BATCHES:
            s = self.sums
            self.sums = [s[i] + s[i + 1] for i in range(0, len(s) - 1, 2)]
            self.size *= 2

    def halfwidth(self) -> tuple[float, int, int] | None:
        """(95% half-width, number of batches, batch size), or None with too few batches."""
        nb = len(self.sums)
        if nb < MIN_N_FOR_CI:
            return None
        means = [s / self.size for s in self.sums]
        m = math.fsum(means) / nb
        var = math.fsum((x - m) ** 2 for x in means) / (nb - 1)
        return t975(nb - 1) * math.sqrt(var / nb), nb, self.size


TAIL = 400


class ColumnChunk:
    """A run of finite values reduced to what :meth:`Series.merge_chunk` needs: exact sums,
    extremes, the last ``TAIL`` values and the running sums (for batch boundaries anywhere).
    Small and picklable, so worker processes can build them."""

    __slots__ = ("n", "sum", "sumsq", "min", "max", "first", "last", "wsum", "wxsum", "wn", "tail", "prefix")

    @classmethod
    def of(cls, xs: Sequence[float], ws: Sequence[float] | None = None) -> ColumnChunk:
        c = cls()
        c.n = len(xs)
        c.sum = math.fsum(xs)
        c.sumsq = sum(map(mul, xs, xs))
        c.min, c.max = (min(xs), max(xs)) if c.n else (math.inf, -math.inf)
        c.first, c.last = (xs[0], xs[-1]) if c.n else (None, None)
        c.wsum = c.wxsum = 0.0
        c.wn = 0
        if ws is not None and c.n:
            if min(ws) > 0 and max(ws) < math.inf:  # the common case, at C speed
                c.wsum, c.wxsum, c.wn = math.fsum(ws), sum(map(mul, ws, xs)), c.n
            else:
                good = [(w, x) for w, x in zip(ws, xs) if w > 0 and math.isfinite(w)]
                c.wsum = math.fsum(w for w, _ in good)
                c.wxsum = math.fsum(w * x for w, x in good)
                c.wn = len(good)
        c.tail = list(xs[-TAIL:])
        c.prefix = list(accumulate(xs, initial=0.0))
        return c

    def __getstate__(self):
        return tuple(getattr(self, k) for k in self.__slots__)

    def __setstate__(self, state) -> None:
        for k, v in zip(self.__slots__, state):
            setattr(self, k, v)


class Series:
    """Streaming statistics of one metric (NaN and inf values are counted apart, never mixed in)."""

    __slots__ = ("n", "_sum", "_sq", "min", "max", "first", "last", "nonfinite", "_wsum", "_wxsum", "wn",
                 "window", "ewma", "_bm")

    def __init__(self, window: int = WINDOW) -> None:
        self.n = 0
        self._sum = _Sum()
        self._sq = _Sum()
        self.min = math.inf
        self.max = -math.inf
        self.first: float | None = None
        self.last: float | None = None
        self.nonfinite = 0
        self._wsum = _Sum()
        self._wxsum = _Sum()
        self.wn = 0
        self.window: deque[float] = deque(maxlen=window)
        self.ewma: float | None = None
        self._bm = BatchMeans()

    # -- feeding -----------------------------------------------------------------------------
    def add(self, x: float, w: float | None = None) -> None:
        if not math.isfinite(x):
            self.nonfinite += 1
            return
        self.n += 1
        self._sum.add(x)
        self._sq.add(x * x)
        if x < self.min:
            self.min = x
        if x > self.max:
            self.max = x
        if self.first is None:
            self.first = x
        self.last = x
        if w is not None and w > 0 and math.isfinite(w):
            self._wsum.add(w)
            self._wxsum.add(w * x)
            self.wn += 1
        self.window.append(x)
        self.ewma = x if self.ewma is None else self.ewma + EWMA_ALPHA * (x - self.ewma)
        self._bm.add(x)

    def add_many(self, xs: Sequence[float], ws: Sequence[float] | None = None) -> None:
        """The same as ``add`` for each value in order, at C speed for long runs."""
        if len(xs) < 16 or not all(map(math.isfinite, xs)):
            for i, x in enumerate(xs):
                self.add(x, ws[i] if ws is not None else None)
            return
        self.merge_chunk(ColumnChunk.of(xs, ws))

    def merge_chunk(self, c: ColumnChunk) -> None:
        """Fold in a run of finite values summarised by :meth:`ColumnChunk.of` (possibly in
        another process): the result equals adding them one by one."""
        if not c.n:
            return
        self.n += c.n
        self._sum.add(c.sum)
        self._sq.add(c.sumsq)
        self.min = min(self.min, c.min)
        self.max = max(self.max, c.max)
        if self.first is None:
            self.first = c.first
        self.last = c.last
        if c.wn:
            self._wsum.add(c.wsum)
            self._wxsum.add(c.wxsum)
            self.wn += c.wn
        tail = c.tail
        maxlen = self.window.maxlen or len(tail)
        self.window.extend(tail[-maxlen:])
        # EWMA: weights decay as (1-a)^k; beyond TAIL values they are below 1e-18 of the newest.
        if self.ewma is not None and c.n <= len(tail):
            e, start = self.ewma, 0
        else:
            e, start = tail[0], 1
        for x in tail[start:]:
            e += EWMA_ALPHA * (x - e)
        self.ewma = e
        self._bm.add_prefix(c.prefix)

    # -- reading -----------------------------------------------------------------------------
    @property
    def mean(self) -> float | None:
        return self._sum.value / self.n if self.n else None

    @property
    def weighted_mean(self) -> float | None:
        w = self._wsum.value
        return self._wxsum.value / w if self.wn and w > 0 else None

    @property
    def std(self) -> float | None:
        if self.n < 2:
            return None
        m = self._sum.value / self.n
        var = (self._sq.value - self.n * m * m) / (self.n - 1)
        return math.sqrt(var) if var > 0 else 0.0

    @property
    def window_mean(self) -> float | None:
        return math.fsum(self.window) / len(self.window) if self.window else None

    def ci95(self) -> tuple[float, float] | None:
        hw = self.halfwidth()
        if hw is None:
            return None
        m = self.mean
        assert m is not None
        return (m - hw, m + hw)

    def halfwidth(self) -> float | None:
        r = self._bm.halfwidth()
        return None if r is None else r[0]

    def se_df(self) -> tuple[float, float] | None:
        """(standard error, degrees of freedom) of the mean, from the batch means."""
        r = self._bm.halfwidth()
        if r is None:
            return None
        hw, nb, _ = r
        return hw / t975(nb - 1), nb - 1

    def ci_method(self) -> str:
        r = self._bm.halfwidth()
        if r is None:
            return "none (fewer than 3 values)"
        _, nb, size = r
        return f"batch means: {nb} batches of {size}"

    def to_dict(self, transform: tuple[float, float] | None = None) -> dict:
        """The statistics as plain data. ``transform`` = (a, b) reports a + b·x instead (an
        exact linear re-expression, used for the normalised accept rate)."""
        a, b = transform or (0.0, 1.0)

        def f(v: float | None) -> float | None:
            return None if v is None else a + b * v

        ci = self.ci95()
        lo_hi = None if ci is None else sorted((f(ci[0]), f(ci[1])))  # type: ignore[type-var]
        std = self.std
        return {
            "n": self.n,
            "mean": f(self.mean),
            "weighted_mean": f(self.weighted_mean),
            "weighted_n": self.wn,
            "std": None if std is None else abs(b) * std,
            "ci95": lo_hi,
            "ci_method": self.ci_method(),
            "min": f(self.min) if self.n else None,
            "max": f(self.max) if self.n else None,
            "first": f(self.first),
            "last": f(self.last),
            "window_mean": f(self.window_mean),
            "window_n": len(self.window),
            "ewma": f(self.ewma),
            "nonfinite": self.nonfinite,
        }
