"""The long-run variance of a mean of autocorrelated values, from batch means, and a check that
the level of the series is stable before a verdict rests on it.

Input: ``m`` batch means ``y_1 … y_m`` in log order (single values while the log is short; see
:class:`tui.core.stats.estimate.Batches`). Output: the variance of the overall mean, its degrees
of freedom and the number of effectively independent batch means.

**Finest level: AR(1).** ``var(ȳ) = s²/m · (1 + φ)/(1 − φ)``, φ the lag-1 autocorrelation,
bias-corrected for small m (Kendall: ``φ = (m·r₁ + 1)/(m − 4)``), clamped to [0, PHI_MAX] (a
negative estimate never claims more precision than independent values) and raised by one
standard error ``√((1 − φ²)/m)`` (an underestimated φ at small m would give too narrow an
interval). The parametric AR(1) long-run variance keeps its calibration at n = 30, where a
lag-window estimator has too few lags to work with; Andrews (1991) and Andrews & Monahan (1992)
use the same AR(1) model to choose their bandwidths and to prewhiten. Degrees of freedom
``m·(1 − φ)/(1 + φ) − 1``.

**Finest level, AR(1) under white noise** (:func:`first_level`): a slow component under per-line
noise (a traffic mix that flips every ~50 lines) has autocorrelations ``r_k = r₁·ρ^(k−1)`` with r₁
well below ρ; lag 1 alone reads it as a weak AR(1) whose long-run variance is several times too
small. When lags 2…5 hold more correlation than the AR(1) of lag 1 implies (by over NOISE_GATE of
Bartlett's standard errors), the variance ``s²/m·(1 + 2r₁/(1 − ρ))`` is computed too and the
larger one is used; independent and AR(1) values do not pass the gate.

**Longer batches (2, 4, 8, … units, while ≥ MIN_GROUPS remain): batch means with a checked
AR(1).** Regime switches and drift put variance at low frequencies that a lag-1 fit on single
lines cannot see; long batches do (batch means, Schmeiser 1982: 10–30 batches suffice once they
are longer than the correlation time). What correlation is left between batches is corrected by
AR(1) again, but only as far as the next lags confirm a geometric decay, ``φ = min_k r_k^(1/k)``
(k ≤ CHECK_LAGS): a slow *cycle* has ``r_k = cos kθ``, which falls far below ``r₁^k``. A longer
level replaces the current choice only when its variance is larger by more than its own sampling
noise explains (the one-sided 99% point of χ²(k)/k, k its degrees of freedom): the old rule, the
largest variance of all levels, picked noise upward and made intervals ~1.4× too wide.

**A bound from the longest batches.** Once those batches are longer than the correlation time
the finest level implies, their variance (× the 99% point of χ²(k)/k) bounds the result: an
AR(1) extrapolation from short batches must not overshoot what long batches show directly (a
cycle of period n/3 looks like a near-unit root on short batches; its old intervals were
[1.0, 4.0] with df ≈ 1 at n = 3,000). The bound never goes below the variance of independent
values.

**Level stability** (:func:`level_shift`): the CUSUM of the batch means, ``max_k |Σ_{j≤k}(y_j −
ȳ)| / (m · se)``, is a Kolmogorov statistic under a stable level (the CUSUM test of Ploberger &
Krämer with a long-run variance). Beyond its 0.1% point (1.95) for the finest level's
(short-memory) variance, the level moved; when it is also beyond CUSUM_LONG for the variance
chosen above, the interval does not account for it: the verdict is ``insufficient: level not
stable (switches between ~a and ~b …)`` and the interval is widened to hold both levels. (The
same reason replaces "strongly correlated" when the answer is insufficient anyway.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from operator import mul

PHI_MAX = 0.98
PHI_MARGIN = 1.0
MIN_UNITS_FOR_CI = 3
MIN_GROUPS = 20  # longer batches are tried while at least this many remain
CHECK_LAGS = 4  # lags that must confirm a geometric decay before AR(1) extrapolates it
CUSUM_LONG = 1.0  # ... and beyond this for the long-run variance (about the 27% point)
SELECT_P = 2.326  # one-sided 99% normal quantile: a longer level must beat its own noise
CUSUM_CRIT = 1.95  # 0.1% point of the Kolmogorov distribution, for the short-memory variance
NOISE_LAGS = 5  # lags of the AR(1)-plus-noise fit
NOISE_MARGIN = 3.0  # standard errors added to its ρ (2: regime switches at n 300 covered 91%)
RATIO_NOISE_MARGIN = 2.0  # ... for pooled ratios (1: 90.8% coverage at φ 0.9, n 100; 3: timid)
NOISE_GATE = 1.645  # its lags beyond the AR(1)'s by this many standard errors: it is used


@dataclass(slots=True)
class Lrv:
    var: float  # variance of the overall mean
    indep: float  # effectively independent batch means at the level used
    phi: float  # AR(1) coefficient used at that level
    size: int  # batch size of that level, in units
    short: float  # the level-1 (short-memory) variance, for the stability check


def _clamp(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


def chi2_ratio(k: float, z: float = SELECT_P) -> float:
    """χ²(k)/k at the normal quantile z (Wilson–Hilferty)."""
    c = 2.0 / (9.0 * k)
    return (1.0 - c + z * math.sqrt(c)) ** 3


def _centred(ys: Sequence[float]) -> tuple[list[float], float]:
    mu = math.fsum(ys) / len(ys)
    d = [y - mu for y in ys]
    return d, math.fsum(map(mul, d, d))


def _kendall(r: float, m: int) -> float:
    return (m * r + 1.0) / (m - 4.0) if m >= 8 else r


def ar1_variance(ys: Sequence[float], margin: float = PHI_MARGIN) -> tuple[float, float, float] | None:
    """Level 1 of the module text: (variance of the mean of ``ys``, effectively independent
    count, φ used), or None with fewer than 3 values."""
    m = len(ys)
    if m < MIN_UNITS_FOR_CI:
        return None
    d, ss = _centred(ys)
    if ss <= 0.0:
        return 0.0, float(m), 0.0
    r1 = math.fsum(map(mul, d[:-1], d[1:])) / ss
    phi = _clamp(_kendall(r1, m), 0.0, PHI_MAX)
    phi = _clamp(phi + margin * math.sqrt((1.0 - phi * phi) / m), 0.0, PHI_MAX)
    f = (1.0 + phi) / (1.0 - phi)
    return ss / (m - 1) / m * f, m / f, phi


def _lags(ys: Sequence[float], k: int) -> list[float] | None:
    """Lag 1…k autocorrelations (bias-corrected as at level 1); None without spread."""
    m = len(ys)
    d, ss = _centred(ys)
    if ss <= 0.0:
        return None
    return [_kendall(math.fsum(map(mul, d[:-j], d[j:])) / ss, m) for j in range(1, k + 1)]


def ar1_noise(
    ys: Sequence[float], lags: list[float] | None = None, margin: float = RATIO_NOISE_MARGIN
) -> tuple[float, float] | None:
    """(r₁, ρ) of AR(1) plus white noise — autocorrelations ``r_k = r₁·ρ^(k−1)`` — with ρ the
    ratio of the sums of lags 2…5 and 1…4 (bias-corrected as at level 1); r₁ raised by one
    standard error and ρ by ``margin`` (the long-run variance grows as 1/(1 − ρ), and ρ from a few
    hundred values falls short of a slow one: :data:`NOISE_MARGIN` for a mean's level 1,
    :data:`RATIO_NOISE_MARGIN` for a pooled ratio's, which has no gate); None with fewer than 16
    values or no positive correlation."""
    m = len(ys)
    if m < 16:
        return None
    r = lags or _lags(ys, NOISE_LAGS)
    if r is None:
        return None
    head, tail = math.fsum(r[:-1]), math.fsum(r[1:])
    if r[0] <= 0.0 or head <= 0.0:
        return None
    rho = _clamp(tail / head, 0.0, PHI_MAX)
    step = math.sqrt((1.0 - rho * rho) / m)
    return _clamp(r[0] + PHI_MARGIN * step, 0.0, PHI_MAX), _clamp(rho + margin * step, 0.0, PHI_MAX)


def first_level(ys: Sequence[float]) -> tuple[float, float, float] | None:
    """Level 1 for a mean: the AR(1) of :func:`ar1_variance`, or AR(1) under white noise
    (:func:`ar1_noise`: a slow component — a traffic mix that flips, a level that wanders —
    under per-line noise) when the lags 2…5 hold more correlation than the AR(1) of lag 1 implies
    by over :data:`NOISE_GATE` standard errors (Bartlett's, for an AR(1)); the larger variance.
    The gate keeps independent and AR(1) values on the AR(1) (their power is unchanged)."""
    base = ar1_variance(ys)
    m = len(ys)
    if base is None or m < 16:
        return base
    r = _lags(ys, NOISE_LAGS)
    if r is None or r[0] <= 0.0:
        return base
    phi = min(r[0], PHI_MAX)
    expect = math.fsum(phi**k for k in range(2, NOISE_LAGS + 1))
    sd = (NOISE_LAGS - 1) * math.sqrt((1.0 + phi * phi) / ((1.0 - phi * phi) * m))
    if math.fsum(r[1:]) - expect <= NOISE_GATE * sd:
        return base
    noisy = ar1_noise(ys, r, NOISE_MARGIN)
    if noisy is None:
        return base
    r1, rho = noisy
    f = 1.0 + 2.0 * r1 / (1.0 - rho)
    _, ss = _centred(ys)
    var = ss / (m - 1) / m * f
    return (var, m / f, rho) if var > base[0] else base


def _checked_ar1(ys: Sequence[float]) -> tuple[float, float, float]:
    """A longer level: batch means with an AR(1) correction confirmed by the next lags."""
    m = len(ys)
    d, ss = _centred(ys)
    if ss <= 0.0:
        return 0.0, float(m), 0.0
    phi = 1.0
    for lag in range(1, CHECK_LAGS + 1):  # φ^k = r_k for every k up to CHECK_LAGS
        r = math.fsum(map(mul, d[:-lag], d[lag:])) / ss
        phi = min(phi, max(r, 0.0) ** (1.0 / lag))
    phi = _clamp(_kendall(phi, m), 0.0, PHI_MAX) if phi > 0.0 else 0.0
    phi = _clamp(phi + PHI_MARGIN * math.sqrt((1.0 - phi * phi) / m), 0.0, PHI_MAX)
    f = (1.0 + phi) / (1.0 - phi)
    return ss / (m - 1) / m * f, m / f, phi


def long_run_variance(
    units: Sequence[float], first: tuple[float, float, float] | None = None, select: float = SELECT_P
) -> Lrv | None:
    """See the module text; None with fewer than 3 batch means. ``first``: level 1 when the
    caller knows better than an AR(1) fit on ``units`` (pooled ratios: see estimate.py).
    ``select``: the normal quantile a longer level's variance must beat (SELECT_P: its 99% point)."""
    if first is None:
        plain = ar1_variance(units)
        first = first_level(units)
        if plain is None or first is None:
            return None
        short = plain[0]  # the stability check measures excursions against the plain AR(1)
    else:
        short = first[0]
    best = Lrv(first[0], first[1], first[2], 1, short)
    level = list(units)
    size = 1
    top = None
    while len(level) // 2 >= MIN_GROUPS:
        level = [(a + b) * 0.5 for a, b in zip(level[0::2], level[1::2])]
        size *= 2
        var, indep, phi = top = _checked_ar1(level)
        if var > best.var * chi2_ratio(max(1.0, indep - 1.0), select):
            best = Lrv(var, indep, phi, size, short)
    f1 = (1.0 + first[2]) / (1.0 - first[2])
    if top is not None and size >= f1:  # batches long against the correlation: a bound
        var, indep, phi = top
        # ... but never below independent values: no level claims that (φ ≥ 0 everywhere)
        ss = _centred(units)[1]
        cap = max(var * chi2_ratio(max(1.0, indep - 1.0)), ss / (len(units) - 1) / len(units))
        if best.var > cap:
            best = Lrv(cap, indep, phi, size, short)
    return best


@dataclass(slots=True)
class Shift:
    """The largest CUSUM excursion of a series whose level moved beyond short-memory noise."""

    lo: float  # lowest and highest of the means before and after it and of the four quarters
    hi: float
    at: int  # batch means before it
    long: bool  # beyond CUSUM_LONG for the long-run variance too (the interval does not cover it)


def level_shift(units: Sequence[float], short: float, var_mean: float) -> Shift | None:
    """The level moved when the largest CUSUM excursion is beyond :data:`CUSUM_CRIT` for the
    short-memory variance ``short`` of the mean (None: it did not, or cannot be judged: fewer than
    8 batch means, or no variance); ``long`` says whether it is beyond :data:`CUSUM_LONG` for the
    long-run variance ``var_mean`` as well."""
    m = len(units)
    if m < 8 or not short > 0.0 or not var_mean > 0.0:
        return None
    mu = math.fsum(units) / m
    c, peak, at = 0.0, 0.0, 0
    for k, y in enumerate(units[:-1], 1):
        c += y - mu
        if abs(c) > peak:
            peak, at = abs(c), k
    if peak / (m * math.sqrt(short)) <= CUSUM_CRIT:
        return None
    parts = [units[:at], units[at:]] + [units[i * m // 4 : (i + 1) * m // 4] for i in range(4)]
    means = [math.fsum(p) / len(p) for p in parts]
    return Shift(min(means), max(means), at, peak / (m * math.sqrt(var_mean)) > CUSUM_LONG)
