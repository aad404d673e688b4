"""Pooled ratios ``offset + ΣA / ΣD`` of count pairs (accepted tokens over drafts, or over
drafted tokens), streaming, with the jackknife-linearised interval of
:func:`tui.core.stats.estimate.ratio_estimate`."""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from itertools import accumulate

from tui.core.stats.estimate import Batches, Estimate, ratio_estimate
from tui.core.stats.series import _Sum


class RatioChunk:
    """A run of count pairs reduced to what :meth:`RatioSeries.merge` needs."""

    __slots__ = ("n", "num", "den", "num_prefix", "den_prefix")

    def __init__(
        self, n: int, num: float, den: float, num_prefix: Sequence[float], den_prefix: Sequence[float]
    ) -> None:
        self.n, self.num, self.den = n, num, den
        self.num_prefix, self.den_prefix = num_prefix, den_prefix

    @classmethod
    def of(cls, nums: Sequence[float], dens: Sequence[float]) -> RatioChunk:
        return cls(
            len(nums),
            math.fsum(nums),
            math.fsum(dens),
            array("d", accumulate(nums, initial=0.0)),  # doubles: a worker's chunk pickles as bytes
            array("d", accumulate(dens, initial=0.0)),
        )


class RatioSeries:
    """A pooled ratio ``offset + ΣA / ΣD`` of count pairs (A: accepted tokens, D: drafts or
    drafted tokens), with the jackknife-linearised interval of :func:`ratio_estimate`."""

    __slots__ = ("n", "_num", "_den", "_bm", "offset", "bounds", "_est")

    def __init__(self, offset: float = 0.0) -> None:
        self.n = 0
        self._num = _Sum()
        self._den = _Sum()
        self._bm = Batches(2)
        self.offset = offset
        self.bounds: tuple[float, float] = (-math.inf, math.inf)
        self._est: Estimate | None = None

    def set_bounds(self, lo: float, hi: float) -> None:
        if (lo, hi) != self.bounds:
            self.bounds, self._est = (lo, hi), None

    def add_many(self, nums: Sequence[float], dens: Sequence[float]) -> None:
        """Pairs of finite counts (the caller checked them), in line order."""
        if len(nums):
            self.merge(RatioChunk.of(nums, dens))

    def merge(self, c: RatioChunk) -> None:
        if not c.n:
            return
        self.n += c.n
        self._num.add(c.num)
        self._den.add(c.den)
        self._bm.add_prefix((c.num_prefix, c.den_prefix))
        self._est = None

    @property
    def numerator(self) -> float:
        return self._num.value

    @property
    def denominator(self) -> float:
        return self._den.value

    @property
    def value(self) -> float | None:
        return self.estimate().value

    def estimate(self) -> Estimate:
        e = self._est
        if e is None:
            lo, hi = self.bounds
            e = ratio_estimate(self._bm, self.n, self._num.value, self._den.value, self.offset, lo, hi)
            self._est = e
        return e

    def to_dict(self, num_key: str, den_key: str) -> dict:
        e = self.estimate()
        ci = e.ci95()
        return {
            "value": e.value,
            "ci95": list(ci) if ci else None,
            num_key: self._num.value,
            den_key: self._den.value,
            "n": self.n,
            "effective_n": e.ess,
            "ci_method": e.method,
        }
