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

**Regimes** (:func:`regimes`, issue 30): a level that flips between two or three values every
tens to hundreds of records, under noise that may itself be an AR(1), is read at level 1 as a
strong φ and hidden from the CUSUM above. Change points are found against the noise around the
levels (:func:`_change_points`: seeded binary segmentation), and blocks that hold about one switch
each give the variance of the mean (a regime-aware block length); see estimate._regime_gate.
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


CHANGE_ALPHA = 0.05  # chance of a false change point, over all seeded intervals
NOISE_CHUNK = 16  # stretches whose means the first noise estimate is taken around
SLOW_LAGS = 10  # lags of the regime gate (slow_lags)
SEGMENTS_Z = 3.09  # ... and differ beyond the 0.1% point of χ²(S − 1) for the whole series' noise
MIN_SEGMENT = 8  # batch means: the shortest stretch a change point splits off
REGIME_ROUNDS = 4  # re-segmentations with the noise around the stretches found
REGIME_BLOCKS = 3  # blocks of the regime-aware length needed to estimate a variance from them


@dataclass(slots=True)
class Regimes:
    """The stretches of one level a series moved between (:func:`regimes`) and the variance of
    its mean from blocks as long as two of them (a regime-aware block length)."""

    segments: int  # stretches of one level found (≥ 2)
    lo: float  # the lowest and highest of their means
    hi: float
    var: float | None  # variance of the overall mean from the blocks; None: fewer than REGIME_BLOCKS
    blocks: int  # blocks of the regime-aware length


def _change_points(units: Sequence[float], sd: float) -> list[int]:
    """Where the level of ``units`` changes: seeded binary segmentation (Kovács et al. 2023)
    with the narrowest-over-threshold choice (Baranowski et al. 2019). On seeded intervals of
    every scale (lengths m, m/2, m/4, … down to 2·MIN_SEGMENT, each overlapping its neighbours
    by half), the CUSUM statistic ``max_k |C_k| / (sd·√w)`` of the interval's best single change
    is a Kolmogorov statistic under a stable level; the narrowest interval beyond the threshold
    gives a change point, every interval holding it is dropped, and so on. The threshold keeps
    the chance of any false change below :data:`CHANGE_ALPHA` over all intervals (Bonferroni on
    the Kolmogorov tail ``2·e^(−2x²)``). A global CUSUM misses levels that come back (H, L, H…
    leave little excursion); short seeded intervals see each switch on its own. ``sd``: the
    short-memory standard deviation of one unit around the levels."""
    m = len(units)
    prefix = [0.0]
    for y in units:
        prefix.append(prefix[-1] + y)
    seeds: list[tuple[int, int]] = []
    w = m
    while w >= 2 * MIN_SEGMENT:
        step = max(1, w // 2)
        seeds.extend((a, min(m, a + w)) for a in range(0, m - w + 1, step))
        w //= 2
    crit = math.sqrt(math.log(2.0 * len(seeds) / CHANGE_ALPHA) / 2.0)
    found: list[tuple[int, int, int]] = []  # (length, start, change point) beyond the threshold
    for a, b in seeds:
        n = b - a
        total = prefix[b] - prefix[a]
        peak, at = 0.0, 0
        for k in range(a + MIN_SEGMENT, b - MIN_SEGMENT + 1):
            c = abs(prefix[k] - prefix[a] - total * (k - a) / n)
            if c > peak:
                peak, at = c, k
        if at and peak / (sd * math.sqrt(n)) > crit:
            found.append((n, a, at))
    found.sort()
    cuts: list[int] = []
    for n, a, at in found:
        # narrowest first; an interval that holds a change point already found is dropped
        if not any(a < c < a + n for c in cuts):
            cuts.append(at)
    return sorted(cuts)


def slow_lags(units: Sequence[float], lags: int = SLOW_LAGS) -> float:
    """How far lags 2…``lags`` hold more correlation than the AR(1) of lag 1 implies, in the
    standard errors of :func:`first_level`'s gate (``−inf`` without positive lag-1 correlation):
    a slow component under faster noise (levels that switch every tens to hundreds of records
    under AR(1) noise) decays as ``r₁·ψ^(k−1)`` with ψ far above r₁, which lags 2…5 alone (the
    gate of level 1) miss at n 300 (its lags still fall at nearly the noise's rate)."""
    m = len(units)
    if m < 4 * lags:
        return -math.inf
    r = _lags(units, lags)
    if r is None or r[0] <= 0.0:
        return -math.inf
    phi = min(r[0], PHI_MAX)
    expect = math.fsum(phi**k for k in range(2, lags + 1))
    sd = (lags - 1) * math.sqrt((1.0 + phi * phi) / ((1.0 - phi * phi) * m))
    return (math.fsum(r[1:]) - expect) / sd


def _diff_noise(units: Sequence[float]) -> float:
    """The AR(1) variance of the mean from first differences, which a switch of level touches
    only once: for AR(1) noise of coefficient φ and variance σ², the differences have variance
    ``2σ²(1 − φ)`` and lag-1 autocorrelation ``−(1 − φ)/2``. Residuals around stretch means
    (:func:`_noise_var`) fall short of the noise's long-run variance by about the share of its
    correlation time in a stretch; this bounds them from below (0 with fewer than 8 values)."""
    m = len(units)
    if m < 8:
        return 0.0
    d = [b - a for a, b in zip(units[:-1], units[1:])]
    dc, ss = _centred(d)
    if ss <= 0.0:
        return 0.0
    r = math.fsum(map(mul, dc[:-1], dc[1:])) / ss
    phi = _clamp(1.0 + 2.0 * r, 0.0, PHI_MAX)
    sigma2 = ss / (len(d) - 1) / (2.0 * (1.0 - phi))
    return sigma2 * (1.0 + phi) / (1.0 - phi) / m


def _noise_var(units: Sequence[float], bounds: Sequence[int]) -> float:
    """The plain AR(1) variance of the mean of ``units`` around the means of the stretches
    ``bounds`` (each unit minus the mean of its stretch)."""
    res: list[float] = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        mu = math.fsum(units[a:b]) / (b - a)
        res.extend(y - mu for y in units[a:b])
    fit = ar1_variance(res)
    return math.inf if fit is None else fit[0]


def regimes(units: Sequence[float], short: float, detect: Sequence[float] | None = None) -> Regimes | None:
    """Stretches of one level in ``units`` (change points by :func:`_change_points`), None when
    the series does not move between levels beyond what its noise explains. ``detect``: the
    series the stretches are found in when it is not ``units`` itself (pooled ratios: each
    batch's acceptance per draft, which the spread of the drafts does not dilute; ``short`` is
    then its short-memory variance), the blocks' variance is still that of ``units``.

    The noise the change points are judged against is not the short-memory variance ``short`` of
    the whole series (an AR(1) fitted to a level that flips reads the flips as a strong φ and
    hides them): it is the AR(1) variance of the residuals around means of stretches of
    :data:`NOISE_CHUNK`, then around the stretches found (:data:`REGIME_ROUNDS` rounds), never
    below the AR(1) variance from first differences (:func:`_diff_noise`) nor above ``short``.
    The stretches found must then differ by more than ``short`` itself explains: ``Σ L_i·(ȳ_i −
    ȳ)² / (short·m)`` beyond the 99% point of χ²(S − 1), so that an AR(1) log gets no regimes.

    With S stretches in m batch means a level lasts about m/S of them; blocks of ``2·m/S`` hold
    about one switch each, so their means carry what the fraction of time at each level does to
    the mean — which batches shorter than a dwell cannot see, and which depends on how the dwell
    times vary (geometric dwells vary as much as they last; a cycle's hardly at all). Their
    variance of the mean is ``s²_blocks / blocks`` (blocks − 1 degrees of freedom); None with
    fewer than :data:`REGIME_BLOCKS` blocks: too few switches to say how they average out."""
    m = len(units)
    if m < 2 * MIN_SEGMENT or not short > 0.0:
        return None
    seen = units if detect is None else detect
    bounds = list(range(0, m - NOISE_CHUNK + 1, NOISE_CHUNK)) + [m]
    cuts: list[int] = []
    noise = short
    floor = _diff_noise(seen)
    for _ in range(REGIME_ROUNDS):
        noise = min(noise, max(floor, _noise_var(seen, bounds)))
        sd = math.sqrt(noise * m)
        found = _change_points(seen, sd)
        if found == cuts:
            break
        cuts, bounds = found, [0, *found, m]
    if not cuts:
        return None
    bounds = [0, *cuts, m]
    lens = [b - a for a, b in zip(bounds[:-1], bounds[1:])]
    means = [math.fsum(seen[a:b]) / (b - a) for a, b in zip(bounds[:-1], bounds[1:])]
    mu = math.fsum(seen) / m
    spread = math.fsum(n * (y - mu) ** 2 for n, y in zip(lens, means)) / m  # the levels' variance
    # an AR(1) log whose noise the residuals underrate gets a few spurious stretches, whose
    # means are within the noise of the whole series: χ²(S − 1) in units of ``short``
    if spread / short <= (len(means) - 1) * chi2_ratio(len(means) - 1.0, SEGMENTS_Z):
        return None
    segs = len(means)
    size = math.ceil(2 * m / segs)  # blocks that hold a switch each, on average
    blocks = m // size
    var = None
    if blocks >= REGIME_BLOCKS:
        off = (m - blocks * size) // 2  # the remainder split between both ends
        ys = [math.fsum(units[off + i * size : off + (i + 1) * size]) / size for i in range(blocks)]
        var = _centred(ys)[1] / (blocks - 1) / blocks
    return Regimes(segs, min(means), max(means), var, blocks)
