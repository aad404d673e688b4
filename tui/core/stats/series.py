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
from collections.abc import Sequence
from itertools import accumulate
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
        var = math.fsum((x - m) * (x - m) for x in means) / (nb - 1)  # huge values: inf, not OverflowError
        return t975(nb - 1) * math.sqrt(var / nb), nb, self.size


TAIL = 400
PENDING = 256  # values held by Series.add before they are folded in


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
    """Streaming statistics of one metric (NaN and inf values are counted apart, never mixed in).

    :meth:`add` only appends to a short pending list; the aggregates take it in as one
    :class:`ColumnChunk` when it is full or when anything is read, so a record costs a list
    append instead of a dozen float updates (the line-by-line paths: stream, replay, the TUI).
    """

    __slots__ = (
        "_n",
        "_sum",
        "_sq",
        "_min",
        "_max",
        "_first",
        "_last",
        "nonfinite",
        "_wsum",
        "_wxsum",
        "_wn",
        "_window",
        "_ewma",
        "_bm",
        "_px",
        "_pw",
    )

    def __init__(self, window: int = WINDOW) -> None:
        self._n = 0
        self._sum = _Sum()
        self._sq = _Sum()
        self._min = math.inf
        self._max = -math.inf
        self._first: float | None = None
        self._last: float | None = None
        self.nonfinite = 0
        self._wsum = _Sum()
        self._wxsum = _Sum()
        self._wn = 0
        self._window: deque[float] = deque(maxlen=window)
        self._ewma: float | None = None
        self._bm = BatchMeans()
        self._px: list[float] = []
        self._pw: list[float | None] = []

    # -- feeding -----------------------------------------------------------------------------
    def add(self, x: float, w: float | None = None) -> None:
        if not math.isfinite(x):
            self.nonfinite += 1
            return
        self._px.append(x)
        self._pw.append(w)
        if len(self._px) >= PENDING:
            self._flush()

    def _flush(self) -> None:
        xs = self._px
        if not xs:
            return
        pw = self._pw
        self._px, self._pw = [], []
        if any(w is not None for w in pw):
            ws: list[float] | None = [w if w is not None and 0 < w < math.inf else 0.0 for w in pw]
        else:
            ws = None
        self.merge_chunk(ColumnChunk.of(xs, ws))

    def add_many(self, xs: Sequence[float], ws: Sequence[float] | None = None) -> None:
        """The same as ``add`` for each value in order, at C speed for long runs."""
        if len(xs) < 16 or not all(map(math.isfinite, xs)):
            for i, x in enumerate(xs):
                self.add(x, ws[i] if ws is not None else None)
            return
        self._flush()
        self.merge_chunk(ColumnChunk.of(xs, ws))

    def merge_chunk(self, c: ColumnChunk) -> None:
        """Fold in a run of finite values summarised by :meth:`ColumnChunk.of` (possibly in
        another process): the result equals adding them one by one."""
        if not c.n:
            return
        if self._px:  # values added one by one before this run come first
            self._flush()
        self._n += c.n
        self._sum.add(c.sum)
        self._sq.add(c.sumsq)
        self._min = min(self._min, c.min)
        self._max = max(self._max, c.max)
        if self._first is None:
            self._first = c.first
        self._last = c.last
        if c.wn:
            self._wsum.add(c.wsum)
            self._wxsum.add(c.wxsum)
            self._wn += c.wn
        tail = c.tail
        maxlen = self._window.maxlen or len(tail)
        self._window.extend(tail[-maxlen:])
        # EWMA: weights decay as (1-a)^k; beyond TAIL values they are below 1e-18 of the newest.
        if self._ewma is not None and c.n <= len(tail):
            e, start = self._ewma, 0
        else:
            e, start = tail[0], 1
        for x in tail[start:]:
            e += EWMA_ALPHA * (x - e)
        self._ewma = e
        self._bm.add_prefix(c.prefix)

    # -- reading -----------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self._n + len(self._px)

    @property
    def wn(self) -> int:
        self._flush()
        return self._wn

    @property
    def min(self) -> float:
        self._flush()
        return self._min

    @property
    def max(self) -> float:
        self._flush()
        return self._max

    @property
    def first(self) -> float | None:
        return self._first if self._first is not None else (self._px[0] if self._px else None)

    @property
    def last(self) -> float | None:
        return self._px[-1] if self._px else self._last

    @property
    def window(self) -> deque[float]:
        self._flush()
        return self._window

    @property
    def ewma(self) -> float | None:
        self._flush()
        return self._ewma

    @property
    def mean(self) -> float | None:
        self._flush()
        return self._sum.value / self._n if self._n else None

    @property
    def weighted_mean(self) -> float | None:
        self._flush()
        w = self._wsum.value
        return self._wxsum.value / w if self._wn and w > 0 else None

    @property
    def std(self) -> float | None:
        self._flush()
        if self._n < 2:
            return None
        m = self._sum.value / self._n
        var = (self._sq.value - self._n * m * m) / (self._n - 1)
        return math.sqrt(var) if var > 0 else 0.0

    @property
    def window_mean(self) -> float | None:
        self._flush()
        return math.fsum(self._window) / len(self._window) if self._window else None

    def ci95(self) -> tuple[float, float] | None:
        hw = self.halfwidth()
        if hw is None:
            return None
        m = self.mean
        assert m is not None
        return (m - hw, m + hw)

    def halfwidth(self) -> float | None:
        self._flush()
        r = self._bm.halfwidth()
        return None if r is None else r[0]

    def se_df(self) -> tuple[float, float] | None:
        """(standard error, degrees of freedom) of the mean, from the batch means."""
        self._flush()
        r = self._bm.halfwidth()
        if r is None:
            return None
        hw, nb, _ = r
        return hw / t975(nb - 1), nb - 1

    def ci_method(self) -> str:
        self._flush()
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
