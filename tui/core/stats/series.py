"""Streaming statistics of one metric, in bounded memory.

A :class:`Series` keeps exact running aggregates (count, compensated sums, min, max, first,
last, weighted sums), a fixed-size window of recent values, an EWMA, and batch sums for the
confidence interval (:mod:`tui.core.stats.estimate`: the long-run variance of batch means, robust to
the autocorrelation of consecutive log lines). The pooled form ΣA/ΣD of count pairs is
:class:`tui.core.stats.pooled.RatioSeries`.

Values reach a series only through :class:`tui.core.stats.segments.SourceStats`, which checks
each value once (finite, within its physical bounds); the series itself still refuses NaN/inf.
"""

from __future__ import annotations

import math
from array import array
from collections import deque
from collections.abc import Sequence
from itertools import accumulate, repeat
from operator import mul, sub

from tui.core.stats.estimate import Batches, Estimate, clamp, mean_estimate, print_step

WINDOW = 50  # values in the recent window
EWMA_ALPHA = 0.1


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


TAIL = 400
SMALL = 16  # shorter runs join Series' pending list instead of being merged one by one
PENDING = 256  # values held by Series.add before they are folded in


class ColumnChunk:
    """A run of finite values reduced to what :meth:`Series.merge_chunk` needs: exact sums,
    extremes, the last ``TAIL`` values and the running sums (for batch boundaries anywhere).
    Small and picklable, so worker processes can build them."""

    __slots__ = (
        "n",
        "sum",
        "m2",
        "min",
        "max",
        "first",
        "last",
        "wsum",
        "wxsum",
        "wn",
        "tail",
        "prefix",
        "small",
        "step",
    )
    n: int
    sum: float
    m2: float  # Σ(x − mean)²
    min: float
    max: float
    first: float | None
    last: float | None
    wsum: float
    wxsum: float
    wn: int
    tail: list[float]
    prefix: array  # running sums from 0 (doubles: a worker's chunk pickles as bytes)
    small: list[float | None] | None  # a short run's weights (None: unweighted), for Series' pending list
    step: float  # print step of the values (estimate.print_step: 0.0 none, inf no values)

    @classmethod
    def of(
        cls,
        xs: Sequence[float],
        ws: Sequence[float] | None = None,
        extent: tuple[float, float] | None = None,
        ws_good: bool = False,
    ) -> ColumnChunk:
        """``extent``: (min, max) of ``xs`` when the caller knows it; ``ws_good``: every weight
        is known to be positive and finite."""
        # Several passes follow: over a list they reuse its float objects, over an array each
        # pass boxes every value again.
        if isinstance(xs, array):
            xs = xs.tolist()
        if isinstance(ws, array):
            ws = ws.tolist()
        c = cls()
        c.n = len(xs)
        c.sum = math.fsum(xs)
        c.m2 = 0.0
        if c.n:
            s2 = math.fsum(map(mul, xs, xs))
            m2 = s2 - c.sum * c.sum / c.n
            if m2 < 1e-6 * s2:  # cancellation (values large and close): shift by the first value
                d = list(map(sub, xs, repeat(xs[0], c.n)))
                s1 = math.fsum(d)
                m2 = math.fsum(map(mul, d, d)) - s1 * s1 / c.n
            c.m2 = max(0.0, m2)
        if extent is not None:
            c.min, c.max = extent
        else:
            c.min, c.max = (min(xs), max(xs)) if c.n else (math.inf, -math.inf)
        c.first, c.last = (xs[0], xs[-1]) if c.n else (None, None)
        c.wsum = c.wxsum = 0.0
        c.wn = 0
        if ws is not None and c.n:
            if ws_good or (min(ws) > 0 and max(ws) < math.inf):  # the common case, at C speed
                c.wsum, c.wxsum, c.wn = math.fsum(ws), math.fsum(map(mul, ws, xs)), c.n
            else:
                good = [(w, x) for w, x in zip(ws, xs) if w > 0 and math.isfinite(w)]
                c.wsum = math.fsum(w for w, _ in good)
                c.wxsum = math.fsum(w * x for w, x in good)
                c.wn = len(good)
        c.tail = list(xs[-TAIL:])
        c.prefix = array("d", accumulate(xs, initial=0.0))
        c.small = None
        c.step = print_step(xs)
        if c.n <= SMALL:
            c.small = [None] * c.n if ws is None else list(ws)
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
        "_m2",
        "_min",
        "_max",
        "_first",
        "_last",
        "nonfinite",
        "out_of_range",
        "bounds",
        "_est",
        "_wsum",
        "_wxsum",
        "_wn",
        "_window",
        "_ewma",
        "_ew_tails",
        "_bm",
        "_px",
        "_pw",
        "_step",
    )

    def __init__(self, window: int = WINDOW) -> None:
        self._n = 0
        self._sum = _Sum()
        self._m2 = 0.0  # Σ(x − mean)², merged by Chan's formula
        self._min = math.inf
        self._max = -math.inf
        self._first: float | None = None
        self._last: float | None = None
        self.nonfinite = 0  # values refused: NaN / inf
        self.out_of_range = 0  # values refused: outside ``bounds`` (counted by SourceStats)
        self.bounds: tuple[float, float] = (-math.inf, math.inf)  # the CI is clamped to these
        self._est: Estimate | None = None
        self._wsum = _Sum()
        self._wxsum = _Sum()
        self._wn = 0
        self._window: deque[float] = deque(maxlen=window)
        self._ewma: float | None = None
        self._ew_tails: list[list[float]] = []  # tails merged since the EWMA was last brought up to date
        self._bm = Batches(1)
        self._px: list[float] = []
        self._pw: list[float | None] = []
        self._step = math.inf  # the finest print step of the chunks merged (estimate.print_step)

    def set_bounds(self, lo: float, hi: float) -> None:
        if (lo, hi) != self.bounds:
            self.bounds, self._est = (lo, hi), None

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
        self._merge(ColumnChunk.of(xs, ws))

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
        if c.small is not None:  # a short run (live logs): pending, folded in with the next ones
            self._px.extend(c.tail)
            self._pw.extend(c.small)
            self._est = None
            if len(self._px) >= PENDING:
                self._flush()
            return
        if self._px:  # values added one by one before this run come first
            self._flush()
        self._merge(c)

    def _merge(self, c: ColumnChunk) -> None:
        n_a, n_b = self._n, c.n
        if n_a:
            delta = c.sum / n_b - self._sum.value / n_a
            self._m2 += c.m2 + delta * delta * n_a * n_b / (n_a + n_b)
        else:
            self._m2 = c.m2
        self._n += c.n
        self._sum.add(c.sum)
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
        # EWMA: weights decay as (1-a)^k; beyond TAIL values they are below 1e-18 of the newest,
        # so a run longer than its tail starts it afresh. Brought up to date when read (the same
        # steps, in the same order, as after each merge): runs merged in bulk cost nothing here.
        if c.n > len(tail):
            self._ewma = None
            self._ew_tails = [tail]
        else:
            self._ew_tails.append(tail)
            if len(self._ew_tails) > 2:  # short runs (live logs): kept up to date, memory bounded
                self._ewma_now()
        self._bm.add_prefix((c.prefix,))
        self._step = min(self._step, c.step)
        self._est = None

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
        self._ewma_now()
        return self._ewma

    def _ewma_now(self) -> None:
        e = self._ewma
        for tail in self._ew_tails:
            start = 0
            if e is None:
                e, start = tail[0], 1
            for x in tail[start:]:
                e += EWMA_ALPHA * (x - e)
        self._ewma = e
        self._ew_tails = []

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
        var = self._m2 / (self._n - 1)
        return math.sqrt(var) if var > 0 else 0.0

    @property
    def window_mean(self) -> float | None:
        self._flush()
        return math.fsum(self._window) / len(self._window) if self._window else None

    @property
    def step(self) -> float | None:
        """The print step of the values (estimate.print_step), None when they have none."""
        return self._step if 0.0 < self._step < math.inf else None

    def estimate(self) -> Estimate:
        """The mean with its autocorrelation-robust standard error (cached until new values)."""
        self._flush()
        e = self._est
        if e is None:
            std = self.std
            lo, hi = self.bounds
            var_x = None if std is None else std * std
            step = self._step if 0.0 < self._step < math.inf else None
            e = mean_estimate(self._bm, self._n, self.mean, var_x, lo, hi, step)
            self._est = e
        return e

    def ci95(self) -> tuple[float, float] | None:
        """The 95% interval of the mean, clamped to the physical bounds."""
        return self.estimate().ci95()

    def halfwidth(self) -> float | None:
        """t · se (before clamping: :meth:`ci95` gives the clamped ends)."""
        return self.estimate().halfwidth()

    def se_df(self) -> tuple[float, float] | None:
        """(standard error, degrees of freedom) of the mean."""
        e = self.estimate()
        return None if e.se is None or e.df is None else (e.se, e.df)

    def ci_method(self) -> str:
        return self.estimate().method

    def to_dict(self, transform: tuple[float, float] | None = None) -> dict:
        """The statistics as plain data. ``transform`` = (a, b) reports a + b·x instead (an
        exact linear re-expression, used for the normalised accept rate)."""
        a, b = transform or (0.0, 1.0)

        def f(v: float | None) -> float | None:
            return None if v is None else a + b * v

        e = self.estimate()
        ci = e.ci95()
        lo_hi = None
        if ci is not None:
            lo_hi = sorted((a + b * ci[0], a + b * ci[1]))
            if transform is not None:  # the normalised rate: a fraction
                lo_hi = [clamp(v, 0.0, 1.0) for v in lo_hi]
        std = self.std
        return {
            "n": self.n,
            "mean": f(self.mean),
            "weighted_mean": f(self.weighted_mean),
            "weighted_n": self.wn,
            "std": None if std is None else abs(b) * std,
            "ci95": lo_hi,
            "ci_method": e.method,
            "effective_n": e.ess,
            "min": f(self.min) if self.n else None,
            "max": f(self.max) if self.n else None,
            "first": f(self.first),
            "last": f(self.last),
            "window_mean": f(self.window_mean),
            "window_n": len(self.window),
            "ewma": f(self.ewma),
            "nonfinite": self.nonfinite,
            "out_of_range": self.out_of_range,
        }
