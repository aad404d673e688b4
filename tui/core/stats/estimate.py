"""Uncertainty of a mean (or a ratio of sums) from autocorrelated values, in bounded memory.

Consecutive log intervals are not independent: the same requests stay in the batch for many
intervals and the load drifts, so the textbook ``s/√n`` interval is far too narrow. What is kept
is a sequence of *batch sums*: every value is its own batch until :data:`UNITS` batches exist,
then neighbours are merged pairwise and the batch size doubles (so there are always between
``UNITS/2`` and ``UNITS`` complete batches once n ≥ ``UNITS``; memory is O(UNITS)).

On the batch means ``y_1 … y_m`` the variance of the overall mean is estimated as

    var(ȳ) = s²_y / m · (1 + φ) / (1 − φ)

with ``φ`` the lag-1 autocorrelation of the batch means, bias-corrected for small m (Kendall:
E[r₁] ≈ φ − (1 + 4φ)/m, so φ = (m·r₁ + 1)/(m − 4)) and clamped to [0, PHI_MAX]: a negative
estimate never claims more precision than independent values. This is the AR(1) long-run
variance; while batches are single values it corrects for the correlation of neighbouring log
lines, and once batches hold many values, what correlation is left between batch means is
short-ranged and the same correction covers it.

The AR(1) fit on single lines misses slow drifts (the autocorrelation of real logs decays slowly),
so the same variance is also computed on longer batches (2, 4, 8, … units, while at least
:data:`MIN_GROUPS` batches remain) and the largest is used (:func:`robust_variance`). At small n
only single lines exist, and there φ is uncertain: one standard error √((1 − φ²)/m) is added to
it, so an underestimate does not turn into too narrow an interval.

``m_eff = m · (1 − φ)/(1 + φ)`` (at the level used) is the number of effectively independent batch
means: the t quantile uses ``m_eff − 1`` degrees of freedom. The *effective sample size* is
``s²_x / var(mean)``: how many independent values would give the same precision (at most n); a
verdict needs it ≥ ``MIN_INDEP`` on both sides (see :mod:`tui.core.stats.compare`).

For a ratio of sums R = ΣA/ΣD (pooled acceptance) the same is applied to the linearised batch
totals ``z_j = A_j − R·D_j`` (the delta method): ``var(R) = var(z̄) / D̄²``.

A mean of printed values has a variance floor (:func:`mean_estimate`): each value was rounded to
its print step h (:func:`print_step`), an error uniform within ±h/2, variance h²/12; so the mean's
variance is at least h²/12 / ess. Values that are all equal give no measure of how independent
their rounding errors are (a constant true value is rounded the same way every time): their
floor is h²/12 with one degree of freedom. Pooled ratios of counts are exact: no floor.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import add, mul, sub

from tui.core import native
from tui.core.model.columns import doubles
from tui.core.stats.tdist import t975

# the optional native helpers (setup.py; off with SPECWATCH_NATIVE=0): the same arithmetic, in C
_native = native.load("tui.core.stats._reduce")

UNITS = 1024  # batches kept: between UNITS/2 and UNITS once the values outnumber them
PHI_MAX = 0.98
PHI_MARGIN = 1.0
MIN_INDEP = 10  # effective sample size needed (each side) for a verdict
MIN_UNITS_FOR_CI = 3
MIN_GROUPS = 20  # longer batches are tried while at least this many remain
PRINT_SCALES = (100.0, 1000.0, 10000.0)  # print steps tried, coarsest first: 0.01 … 0.0001
STEP_SAMPLE = 256  # values of a long run that print_step looks at (2,048 cost summary ~6% more)
MAX_DISTINCT = 1000  # more distinct values than this: no print step is looked for (see print_step)
_FIT = 1e-6  # a value fits a step when value/step is this close to a whole number


@dataclass(slots=True)
class Estimate:
    """A point estimate with its standard error, as the comparison and the displays use it."""

    value: float | None
    se: float | None  # None: no interval (fewer than 3 batches)
    df: float | None
    n: int  # values (records) behind it
    ess: float | None  # effective number of independent values (≤ n)
    indep: float | None  # effectively independent batch means (the verdict rule)
    phi: float | None  # lag-1 autocorrelation used
    method: str
    lo: float = -math.inf  # physical bounds of the value (the CI is clamped to them)
    hi: float = math.inf

    def ci95(self) -> tuple[float, float] | None:
        if self.value is None or self.se is None or self.df is None:
            return None
        hw = t975(self.df) * self.se
        return clamp(self.value - hw, self.lo, self.hi), clamp(self.value + hw, self.lo, self.hi)

    def halfwidth(self) -> float | None:
        if self.se is None or self.df is None:
            return None
        return t975(self.df) * self.se


def clamp(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


class Batches:
    """Batch sums of one or more parallel channels (values; or numerators and denominators)."""

    __slots__ = ("size", "sums", "cur", "cur_n")

    def __init__(self, channels: int = 1) -> None:
        self.size = 1
        self.sums: list[array] = [array("d") for _ in range(channels)]
        self.cur = [0.0] * channels
        self.cur_n = 0

    def add_prefix(self, prefixes: Sequence[Sequence[float]]) -> None:
        """Add the values whose running sums are ``prefixes[c]`` (each starting at 0)."""
        i, n = 0, len(prefixes[0]) - 1
        cur = self.cur
        while i < n:
            size = self.size
            k = min((n - i) // size, UNITS - len(self.sums[0])) if self.cur_n == 0 else 0
            if k > 1:  # whole batches at once: the same sums as closing them one by one
                last = i + size * k
                for c, p in enumerate(prefixes):
                    if _native is not None and isinstance(p, array):
                        self.sums[c].frombytes(_native.steps(p, i, last, size))
                    else:
                        self.sums[c].extend(map(sub, p[i + size : last + 1 : size], p[i:last:size]))
                i = last
                if len(self.sums[0]) >= UNITS:
                    self._halve()
                continue
            take = min(size - self.cur_n, n - i)
            for c, p in enumerate(prefixes):
                cur[c] += p[i + take] - p[i]
            self.cur_n += take
            i += take
            if self.cur_n == self.size:
                self._close()

    def _close(self) -> None:
        for c, s in enumerate(self.sums):
            s.append(self.cur[c])
            self.cur[c] = 0.0
        self.cur_n = 0
        if len(self.sums[0]) >= UNITS:
            self._halve()

    def _halve(self) -> None:
        """Neighbouring batches joined: half as many, twice as long."""
        if _native is not None:
            self.sums = [doubles(_native.pairs(s)) for s in self.sums]
        else:
            self.sums = [array("d", map(add, s[0::2], s[1::2])) for s in self.sums]
        self.size *= 2

    @property
    def count(self) -> int:
        return len(self.sums[0])


def ar1_variance(ys: Sequence[float], margin: float = PHI_MARGIN) -> tuple[float, float, float] | None:
    """(variance of the mean of ``ys``, effectively independent count, φ used), or None with
    fewer than 3 values. See the module text."""
    m = len(ys)
    if m < MIN_UNITS_FOR_CI:
        return None
    mu = math.fsum(ys) / m
    d = [y - mu for y in ys]
    ss = math.fsum(map(mul, d, d))
    if ss <= 0.0:
        return 0.0, float(m), 0.0
    r1 = math.fsum(map(mul, d[:-1], d[1:])) / ss
    phi = (m * r1 + 1.0) / (m - 4.0) if m >= 8 else r1
    phi = clamp(phi, 0.0, PHI_MAX)
    # φ itself is uncertain (sd ≈ √((1 − φ²)/m)): use one sd above the estimate, so that an
    # underestimate at small m does not turn into an interval that is too narrow.
    phi = clamp(phi + margin * math.sqrt((1.0 - phi * phi) / m), 0.0, PHI_MAX)
    f = (1.0 + phi) / (1.0 - phi)
    return ss / (m - 1) / m * f, m / f, phi


def robust_variance(units: Sequence[float]) -> tuple[float, float, float, int] | None:
    """The largest AR(1)-corrected variance of the mean over the batch sizes 1, 2, 4, … units
    (neighbours averaged) that leave at least :data:`MIN_GROUPS` batches: (variance, effectively
    independent batches, φ, batch size in units) of that level. Correlation that an AR(1) fit on
    single lines misses (slow drifts: the autocorrelation of real logs decays slowly) shows up in
    the longer batches; at small n only the first level exists."""
    best = None
    level = list(units)
    size = 1
    while True:
        r = ar1_variance(level, PHI_MARGIN if size == 1 else 0.0)
        if r is not None and (best is None or r[0] > best[0]):
            best = (*r, size)
        if len(level) // 2 < MIN_GROUPS:
            return best
        level = [(a + b) * 0.5 for a, b in zip(level[0::2], level[1::2])]
        size *= 2


def _fits(xs: Sequence[float], scale: float) -> bool:
    ys = list(map(mul, xs, repeat(scale, len(xs))))
    return max(map(abs, map(sub, ys, map(round, ys))), default=0.0) <= _FIT


def print_step(xs: Sequence[float]) -> float:
    """The coarsest decimal step of :data:`PRINT_SCALES` that the values of ``xs`` are multiples
    of (0.01 at most: whole numbers and tenths are read as printed to 0.01); 0.0 when none is
    (values that were not printed decimals, e.g. ratios computed from counts); inf for no values.
    NaN and inf (values not printed) are left out.

    A long run is judged by :data:`STEP_SAMPLE` of its values spread evenly through it (every
    k-th), a shorter one by all of them; only their distinct values are tested, and with more
    than :data:`MAX_DISTINCT` of those the answer is 0.0: K distinct multiples of h have a spread
    s² ≥ h²·K³/(12·n), far above the rounding variance h²/12 unless n > K³ (10⁹ records), so the
    floor could not bind anyway."""
    k = -(-len(xs) // STEP_SAMPLE)
    values = set(filter(math.isfinite, xs[::k] if k > 1 else xs))
    if not values:
        return math.inf
    if len(values) > MAX_DISTINCT:
        return 0.0
    distinct = list(values)
    for scale in PRINT_SCALES:
        if _fits(distinct, scale):
            return 1.0 / scale
    return 0.0


def mean_estimate(
    b: Batches,
    n: int,
    mean: float | None,
    var_x: float | None,
    lo: float,
    hi: float,
    step: float | None = None,
) -> Estimate:
    """The estimate of a plain mean from its batches (channel 0). ``step``: the print step of
    the values (:func:`print_step`), for the rounding floor of the module text; None: no floor."""
    size = b.size
    r = robust_variance([s / size for s in b.sums[0]]) if mean is not None else None
    if r is None:
        return Estimate(mean, None, None, n, None, None, None, "none (fewer than 3 values)", lo, hi)
    var, indep, phi, k = r
    ess = float(n) if var == 0.0 or not var_x else min(float(n), var_x / var)
    method = (
        f"AR(1)-corrected batch means: {b.count // k} batches of {size * k}, lag-1 autocorrelation {phi:.2f}"
    )
    if step:
        rounding = step * step / 12.0
        # all values equal (up to float noise): the rounding error may be the same in every one
        if not var_x or var_x < 1e-12 * rounding:
            var, indep = max(var, rounding), 1.0
            method = f"all values equal: only the rounding of their print step {step:g}"
        else:
            var = max(var, rounding / ess)
    return Estimate(mean, math.sqrt(var), max(1.0, indep - 1.0), n, ess, indep, phi, method, lo, hi)


def ratio_estimate(
    b: Batches, n: int, num: float, den: float, offset: float, lo: float, hi: float
) -> Estimate:
    """offset + ΣA/ΣD with its delta-method standard error over the batches (channels A, D)."""
    if n == 0 or den <= 0.0:
        return Estimate(None, None, None, n, None, None, None, "none (no counts)", lo, hi)
    ratio = num / den
    value = offset + ratio
    a_s, d_s = b.sums
    m = len(a_s)
    if m < MIN_UNITS_FOR_CI:
        return Estimate(value, None, None, n, None, None, None, "none (fewer than 3 values)", lo, hi)
    z = [a - ratio * d for a, d in zip(a_s, d_s)]
    r = robust_variance(z)
    assert r is not None
    var_z, indep, phi, k = r
    d_bar = math.fsum(d_s) / m
    var = var_z / (d_bar * d_bar)
    # Effective values: the per-line variance of the linearised values over var(R). A batch sum
    # of ``size`` lines has ``size`` times a line's variance, and a line's drafts are d̄ / size:
    # per line, var(z_j) / size / (d̄ / size)² = var(z_j) · size / d̄².
    zz = math.fsum(map(mul, z, z)) / max(1, m - 1) * b.size / (d_bar * d_bar)
    ess = float(n) if var == 0.0 else min(float(n), zz / var)
    method = (
        f"ratio of sums, delta method over {m // k} batches of {b.size * k}, lag-1 autocorrelation {phi:.2f}"
    )
    return Estimate(value, math.sqrt(var), max(1.0, indep - 1.0), n, ess, indep, phi, method, lo, hi)
