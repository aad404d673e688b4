"""A streaming change-point test: has a segment's level shifted for good?

Acceptance can degrade over hours without a restart (vLLM #41838): the segment's mean then mixes
two regimes. :class:`DriftDetector` notices such a sustained shift, in either direction:

1. Values are grouped in batches of ``batch`` records (default 50); the test works on the batch
   means ``x₁..xₙ`` since the (re)start, ``Sₜ`` the sum of the first ``t``.
2. After each batch past the warm-up (``warmup`` batches, default 10), the standardised CUSUM
   statistic of a change in mean, the largest two-sample z of "before t" against "after t"::

       Z = max over t of |Sₜ − (t/n)·Sₙ| / (σ·√(t·(n − t)/n))      (at least 3 batches each side)

   is compared with a limit that grows with the number of looks and split points:
   ``h + GROWTH·log₂(n / 4·warmup)`` once ``n > 4·warmup`` (h = 4.0, GROWTH = 0.25: with σ known,
   simulated white noise crosses it in 0.7% of runs of 40 batches, 1.6% of 100 and 2.3% of 400;
   σ as estimated below errs on the safe side, see the measured rates in docs/alerts.md). The
   standardised statistic (not ``max |Sₜ − (t/n)Sₙ| / (σ√n)``, which weights a split by
   ``√(p(1 − p))``) finds a shift early in a long segment as well as one in its middle.
3. ``σ`` is the **long-run** standard deviation of the batch means (what their sum's spread
   really is when neighbouring batches are correlated, as near a unit root), never the plain sd
   of a few of them: at the end of the warm-up, from its values (:func:`long_run_variance`:
   AR(1) with φ bias-corrected and one standard error up, over blocks of 1, 2, 4, … records);
   then, before any alarm, again from *all* values so far with each side of the candidate change
   less its own mean (so the shift itself does not inflate it): the larger of the records' AR(1)
   long-run variance (φ two standard errors up) and the batch means' own long-run variance
   (from ``REPLACE·warmup`` batches on, this alone; before, the larger with the warm-up's). φ is
   not capped below 1 (it was at 0.95, with the variance of one batch mean instead of the
   long-run one: at φ = 0.97 that gave σ about 0.6 of its true value). A warm-up too short to
   see the correlation is corrected before it can raise an alarm.

With a change the evidence keeps growing, so a shift is never absorbed into the baseline; the
``t`` of the maximum estimates where the new level began. After an alarm the detector starts
over: the values after the change form the new baseline. The cost is two passes over the
segment's batch means per batch (a day of one record a second is about 1,700 batches).

Measured (``python bench/bench_drift.py``: seeded AR(1) series, mean 3.0, per-record sd 0.3, 400
runs per cell, before and after in one run): see docs/alerts.md, "The drift test".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

BATCH = 50
WARMUP = 10
H = 4.0  # the limit of the standardised CUSUM up to 4·warmup batches
GROWTH = 0.25  # … and how much it rises for every doubling of the batches since then
RESID_MARGIN = 1.0  # standard errors added to φ of the batch means (the alarm's σ)
RECORD_MARGIN = 2.0  # … and to φ of the records
REPLACE = 2  # from REPLACE·warmup batches on, σ from all values replaces the warm-up's
MIN_SIDE = 3  # batches on each side of a change: one odd batch is not a shift
PHI_MAX = 0.999  # only to keep 1 − φ positive: φ is not capped below a unit root
MIN_GROUPS = 20  # longer blocks of the warm-up values are tried while at least this many remain


@dataclass(frozen=True, slots=True)
class DriftAlarm:
    direction: str  # "down" or "up"
    baseline: float  # the mean before the estimated change
    recent: float  # the mean after it
    records: int  # records seen since the detector (re)started
    since_record: int  # the estimated first record of the new level (counted as ``records``)
    since_time: float | None = None  # that record's time, when the values were given times


class DriftDetector:
    """Feed values one at a time with :meth:`add`; it returns a :class:`DriftAlarm` when the level
    has shifted. Non-finite values are ignored (never counted as zero)."""

    def __init__(self, batch: int = BATCH, warmup: int = WARMUP, h: float = H) -> None:
        if batch < 2 or warmup < 2 * MIN_SIDE or h <= 0:
            raise ValueError(f"batch needs at least 2, warmup at least {2 * MIN_SIDE}; h > 0")
        self.batch, self.warmup, self.h = batch, warmup, h
        self.reset()

    def reset(self) -> None:
        self.records = 0
        self._acc = 0.0
        self._acc_n = 0
        self._ref: float | None = None  # the first value: second moments are of x − ref
        self._prev = 0.0  # the previous value's x − ref
        self._acc2 = 0.0  # the batch's Σ (x − ref)² and Σ of neighbours' products (x − ref)·(x' − ref)
        self._accl = 0.0
        self._p2: list[float] = [0.0]  # their running sums, batch by batch
        self._pl: list[float] = [0.0]
        self._warm_values: list[float] = []
        self._means: list[float] = []  # every batch mean since the (re)start
        self._prefix: list[float] = [0.0]  # their running sums
        self._starts: list[float | None] = []  # the time of each batch's first value
        self._batch_t: float | None = None
        self.mu: float | None = None
        self.sigma: float | None = None

    @property
    def ready(self) -> bool:
        """Whether the warm-up is over (the detector can alarm)."""
        return self.mu is not None

    def add(self, value: float | None, t: float | None = None) -> DriftAlarm | None:
        """One value (``t``: its time, only to say when a shift began)."""
        if value is None or not math.isfinite(value):
            return None
        self.records += 1
        if self._acc_n == 0:
            self._batch_t = t
        if self.mu is None:
            self._warm_values.append(value)
        if self._ref is None:
            self._ref = value
        d = value - self._ref
        self._acc2 += d * d
        self._accl += d * self._prev
        self._prev = d
        self._acc += value
        self._acc_n += 1
        if self._acc_n < self.batch:
            return None
        mean = self._acc / self._acc_n
        self._acc, self._acc_n = 0.0, 0
        self._p2.append(self._p2[-1] + self._acc2)
        self._pl.append(self._pl[-1] + self._accl)
        self._acc2 = self._accl = 0.0
        self._starts.append(self._batch_t)
        if self.mu is None:
            self._means.append(mean)
            self._prefix.append(self._prefix[-1] + mean)
            if len(self._means) >= self.warmup:
                self._baseline()
            return None
        return self._step(mean)

    def _baseline(self) -> None:
        means = self._means
        mu = sum(means) / len(means)
        sd_means = math.sqrt(sum((m - mu) ** 2 for m in means) / (len(means) - 1))
        lrv = long_run_variance(self._warm_values)
        floor = 1e-6 * max(abs(mu), 1.0)  # a constant series: any real change is a shift
        self.mu, self.sigma = mu, max(sd_means, math.sqrt(lrv / self.batch), floor)
        self._warm_values = []

    def _confirmed(self, tau: int, best: float, n: int) -> bool:
        """Whether the statistic still passes the limit with σ estimated from all the values so
        far, each side of the change less its own mean (so a shift does not inflate it): the
        larger of the AR(1) long-run variance of the records and the long-run variance of the
        batch means, so that a warm-up too short to see the correlation is corrected here."""
        means, b = self._means, self.batch
        left = self._prefix[tau] / tau
        right = (self._prefix[-1] - self._prefix[tau]) / (n - tau)
        resid = [m - left for m in means[:tau]] + [m - right for m in means[tau:]]
        lrv = max(long_run_variance(resid, 8, RESID_MARGIN), self._records_lrv(tau, n) / b)
        sigma = max(self.sigma or 0.0, math.sqrt(lrv)) if n < REPLACE * self.warmup else math.sqrt(lrv)
        return best / max(sigma, 1e-6 * max(abs(left), 1.0)) > self.limit(n)

    def _records_lrv(self, tau: int, n: int) -> float:
        """The AR(1) long-run variance of the records, each side of batch ``tau`` less its mean."""
        ref, b = self._ref or 0.0, self.batch
        ss = cross = 0.0
        for lo, hi in ((0, tau), (tau, n)):
            k = (hi - lo) * b
            mu = b * (self._prefix[hi] - self._prefix[lo]) / k - ref  # the side's mean of x − ref
            ss += self._p2[hi] - self._p2[lo] - k * mu * mu
            cross += self._pl[hi] - self._pl[lo] - k * mu * mu
        m = n * b
        if ss <= 0.0:
            return 0.0
        phi = min(max((m * cross / ss + 1.0) / (m - 4.0), 0.0), PHI_MAX)  # Kendall's bias correction
        phi = min(phi + RECORD_MARGIN * math.sqrt((1.0 - phi * phi) / m), PHI_MAX)
        return ss / (m - 2) * (1.0 + phi) / (1.0 - phi)

    def limit(self, n: int) -> float:
        """The alarm level after ``n`` batch means: ``h`` up to ``4·warmup`` batches, then
        :data:`GROWTH` higher for every doubling of ``n`` (more looks, more split points)."""
        return self.h + GROWTH * math.log2(max(n, 4 * self.warmup) / (4 * self.warmup))

    def _step(self, mean: float) -> DriftAlarm | None:
        assert self.mu is not None and self.sigma is not None
        self._means.append(mean)
        self._prefix.append(self._prefix[-1] + mean)
        n = len(self._means)
        total = self._prefix[-1]
        best, tau = 0.0, 0
        prefix = self._prefix
        for t in range(MIN_SIDE, n - MIN_SIDE + 1):
            z = abs(prefix[t] - t * total / n) / math.sqrt(t * (n - t) / n)
            if z > best:
                best, tau = z, t
        if best <= 0.0 or (n < REPLACE * self.warmup and best / self.sigma <= self.limit(n)):
            return None
        if not self._confirmed(tau, best, n):
            return None
        before = self._prefix[tau] / tau
        after = (total - self._prefix[tau]) / (n - tau)
        alarm = DriftAlarm(
            "down" if after < before else "up",
            before,
            after,
            self.records,
            tau * self.batch + 1,
            self._starts[tau],
        )
        self.reset()
        return alarm


def ar1_phi(xs: list[float], margin: float, cap: float = PHI_MAX) -> tuple[float, float] | None:
    """(Σ(x − x̄)², φ) of ``xs``: φ the lag-1 autocorrelation, bias-corrected (Kendall) and
    ``margin`` standard errors up, in [0, cap]; None when the values do not vary."""
    m = len(xs)
    mu = sum(xs) / m
    d = [x - mu for x in xs]
    ss = sum(x * x for x in d)
    if ss <= 0.0:
        return None
    r1 = sum(a * b for a, b in zip(d, d[1:])) / ss
    phi = min(max((m * r1 + 1.0) / (m - 4.0), 0.0), cap)  # Kendall: E[r₁] ≈ φ − (1 + 4φ)/m
    return ss, min(phi + margin * math.sqrt((1.0 - phi * phi) / m), cap)


def _ar1_lrv(xs: list[float], margin: float) -> float:
    """The AR(1) long-run variance ``s²·(1 + φ)/(1 − φ)`` of ``xs`` (φ from :func:`ar1_phi`; 0
    when the values do not vary)."""
    got = ar1_phi(xs, margin)
    if got is None:
        return 0.0
    ss, phi = got
    return ss / (len(xs) - 1) * (1.0 + phi) / (1.0 - phi)


def long_run_variance(xs: list[float], least: int = MIN_GROUPS, margin: float = 1.0) -> float:
    """The long-run variance of ``xs`` (the variance of their mean times their count): the
    largest AR(1) value over blocks of 1, 2, 4, … values (block means, times the block length)
    that leave at least :data:`MIN_GROUPS` blocks, so that a slowly decaying correlation that an
    AR(1) fit on single values misses is seen in the longer blocks."""
    best, level, size = 0.0, list(xs), 1
    while len(level) >= least and (size == 1 or len(level) >= MIN_GROUPS):
        best = max(best, size * _ar1_lrv(level, margin if size == 1 else 0.0))
        level = [(a + b) * 0.5 for a, b in zip(level[0::2], level[1::2])]
        size *= 2
    return best
