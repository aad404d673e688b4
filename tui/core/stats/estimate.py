"""Uncertainty of a mean (or a ratio of sums) from autocorrelated values, in bounded memory.

Consecutive log intervals are not independent: the same requests stay in the batch for many
intervals and the load drifts, so the textbook ``s/√n`` interval is far too narrow. What is kept
is a sequence of *batch sums*: every value is its own batch until :data:`UNITS` batches exist,
then neighbours are merged pairwise and the batch size doubles (so there are always between
``UNITS/2`` and ``UNITS`` complete batches once n ≥ ``UNITS``; memory is O(UNITS)).

The variance of the overall mean comes from these batch means by the long-run variance estimator
of :mod:`tui.core.stats.lrv` (AR(1) at the finest level, checked AR(1) on longer batches, a bound
from the longest ones), with its degrees of freedom ``m_eff − 1`` (effectively independent batch
means at the level used). The *effective sample size* is ``s²_x / var(mean)``: how many
independent values would give the same precision (at most n); a verdict needs it ≥ ``MIN_INDEP``
on both sides, and a stable level (lrv.level_shift; see :mod:`tui.core.stats.compare`).

Both estimators pass the regime gate (:func:`_regime_gate`, :func:`tui.core.stats.lrv.regimes`):
a level that flips between a few values gets the variance of blocks that hold about one switch
each, with their degrees of freedom, or ``insufficient`` with both levels held when too few
switches were seen to say how they average out.

For a ratio of sums R = ΣA/ΣD (pooled acceptance, :func:`ratio_estimate`) the batch values are
``u_j = (A_j − R·D_j) / (1 − h_j)``, ``h_j = D_j/ΣD``: the delta-method linearisation with the
jackknife's leverage correction (leaving batch j out moves R by exactly −u_j/ΣD; HC3 in
regression terms), so one batch holding most drafts is not treated as a small residual. The
finest level is the AR(1) quadratic form with the drafts as they are (:func:`_ratio_level1`).
The degrees of freedom are at most the number of batches the drafts are spread over,
``(ΣD)²/ΣD²``, and the number of terms the variance rests on, ``(Σu²)²/Σu⁴``; below
``MIN_INDEP`` intervals' worth of drafts the answer is ``insufficient`` ("drafts concentrated").

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
from typing import NamedTuple

from tui.core import native
from tui.core.model.columns import doubles
from tui.core.stats.lrv import (
    MIN_UNITS_FOR_CI,
    ar1_noise,
    ar1_variance,
    level_shift,
    long_run_variance,
    regimes,
    slow_lags,
)
from tui.core.stats.tdist import t975

# the optional native helpers (setup.py; off with SPECWATCH_NATIVE=0): the same arithmetic, in C
_native = native.load("tui.core.stats._reduce")

UNITS = 1024  # batches kept: between UNITS/2 and UNITS once the values outnumber them
MIN_INDEP = 5  # effective sample size needed (each side) for a verdict (the t quantile does the rest)
PRINT_SCALES = (100.0, 1000.0, 10000.0)  # print steps tried, coarsest first: 0.01 … 0.0001
STEP_SAMPLE = 256  # values of a long run that print_step looks at (2,048 cost summary ~6% more)
MAX_DISTINCT = 1000  # more distinct values than this: no print step is looked for (see print_step)
BLOCKS_SHARE = 0.5  # regime blocks whose variance is above this share of the long-run one decide df
SLOW_GATE = 1.0  # lrv.slow_lags beyond this: the series is searched for regimes
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
    levels: tuple[float, float] | None = None  # level not stable: the two levels it moved between
    why: str = ""  # why the values cannot support a verdict (besides correlation), "" if they can

    def ci95(self) -> tuple[float, float] | None:
        if self.value is None or self.se is None or self.df is None:
            return None
        hw = t975(self.df) * self.se
        lo, hi = self.value - hw, self.value + hw
        if self.levels is not None:  # an unstable level: the interval holds both levels
            lo, hi = min(lo, *self.levels), max(hi, *self.levels)
        return clamp(lo, self.lo, self.hi), clamp(hi, self.lo, self.hi)

    def halfwidth(self) -> float | None:
        """Half the width of :meth:`ci95` (what ``±`` shows everywhere, as ``summary`` prints it:
        a level that is not stable widens the interval to hold both levels, and ``±`` with it)."""
        if self.se is None or self.df is None:
            return None
        ci = self.ci95()
        return t975(self.df) * self.se if ci is None else (ci[1] - ci[0]) / 2.0


def clamp(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


class Steps(NamedTuple):
    """Where batches close over the next values (:meth:`Batches.boundaries`): the offsets ``ks``
    (0, the end of the open batch's fill when one is open, the end of each whole batch, and the
    end when a part is left open), the values that fill the open batch, the whole batches, the
    values left open, and whether the open batch closes."""

    ks: list[int]
    first: int
    whole: int
    rest: int
    closes: bool


class Batches:
    """Batch sums of one or more parallel channels (values; or numerators and denominators)."""

    __slots__ = ("size", "sums", "cur", "cur_n", "units")

    def __init__(self, channels: int = 1, units: int = UNITS) -> None:
        self.units = units  # batches kept (even): between units/2 and units once values outnumber them
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
            k = min((n - i) // size, self.units - len(self.sums[0])) if self.cur_n == 0 else 0
            if k > 1:  # whole batches at once: the same sums as closing them one by one
                last = i + size * k
                for c, p in enumerate(prefixes):
                    if _native is not None and isinstance(p, array):
                        self.sums[c].frombytes(_native.steps(p, i, last, size))
                    else:
                        self.sums[c].extend(map(sub, p[i + size : last + 1 : size], p[i:last:size]))
                i = last
                if len(self.sums[0]) >= self.units:
                    self._halve()
                continue
            take = min(size - self.cur_n, n - i)
            for c, p in enumerate(prefixes):
                cur[c] += p[i + take] - p[i]
            self.cur_n += take
            i += take
            if self.cur_n == self.size:
                self._close()

    def boundaries(self, n: int) -> Steps | None:
        """Where batches close as :meth:`add_prefix` adds ``n`` more values (:class:`Steps`);
        None where a halving would come meanwhile (only :meth:`add_prefix` does that). For
        :meth:`add_steps`: a caller that has running sums at a few places need not build a
        prefix of every value."""
        size, cur_n = self.size, self.cur_n
        ks = [0]
        first = min(size - cur_n, n) if cur_n else 0  # the open batch filled first
        if first:
            ks.append(first)
        whole = (n - first) // size
        ks.extend(range(first + size, first + size * whole + 1, size))
        rest = n - ks[-1]
        if rest:
            ks.append(n)
        closes = bool(cur_n) and cur_n + first == size
        if len(self.sums[0]) + closes + whole >= self.units:
            return None
        return Steps(ks, first, whole, rest, closes)

    def add_steps(self, plan: Steps, steps: Sequence[Sequence[float]]) -> None:
        """The values between the offsets of ``plan`` (:meth:`boundaries`, with nothing added
        since) added by their sums: ``steps[c][j]`` is channel c's sum over ``ks[j]…ks[j+1]``.
        The batch sums are those that :meth:`add_prefix` makes of the same running sums (the
        same differences, the same order)."""
        first, whole, rest, closes = plan.first, plan.whole, plan.rest, plan.closes
        cur = self.cur
        for c, (d, sums) in enumerate(zip(steps, self.sums)):
            k = 0
            if first:
                cur[c] += d[0]
                k = 1
                if closes:
                    sums.append(cur[c])
                    cur[c] = 0.0
            if whole:
                sums.extend(d[k : k + whole])
            if rest:
                cur[c] += d[-1]
        if closes:
            self.cur_n = 0
        elif first:
            self.cur_n += first
        self.cur_n += rest

    def _close(self) -> None:
        for c, s in enumerate(self.sums):
            s.append(self.cur[c])
            self.cur[c] = 0.0
        self.cur_n = 0
        if len(self.sums[0]) >= self.units:
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


def _regime_gate(
    units: Sequence[float],
    short: float,
    var: float,
    indep: float,
    detect: tuple[Sequence[float], float] | None = None,
) -> tuple[float, float, tuple[float, float] | None, str]:
    """The regime gate of both estimators (lrv.regimes): when the series moved between levels,
    the variance from blocks of the regime-aware length where it is larger (and its blocks as the
    independent count), or, with too few switches to estimate it, the two levels (the interval is
    widened to hold them) and the reason. Returns (var, indep, levels, why)."""
    seen, seen_short = detect if detect is not None else (units, short)
    if not (var > short or slow_lags(seen) > SLOW_GATE):  # short-memory noise: no regimes
        return var, indep, None, ""
    reg = regimes(units, seen_short, seen)
    if reg is None:
        return var, indep, None, ""
    if reg.var is None:
        why = (
            f"level not stable (switches between ~{reg.lo:.2f} and ~{reg.hi:.2f}, {reg.segments} "
            "stretches: too few switches to average out); compare stretches of one level, or wait "
            "for more switches"
        )
        return var, indep, (reg.lo, reg.hi), why
    # the level's share of the variance rests on the blocks even where their estimate is a little
    # smaller (three blocks' variance is often small by chance): the degrees of freedom are
    # theirs; blocks far below it (a slow cycle: each block holds whole periods) leave it alone
    if reg.var > BLOCKS_SHARE * var:
        return max(var, reg.var), min(indep, float(reg.blocks)), None, ""
    return var, indep, None, ""


def _unstable(
    units: Sequence[float], short: float, var: float, size: int, ess: float
) -> tuple[tuple[float, float] | None, str]:
    """(the two levels, the reason) when the level is not stable (lrv.level_shift): beyond what
    the long-run variance accounts for, or already too uncertain for a verdict (then the reason
    says why better than "strongly correlated" does); (None, "") otherwise."""
    shift = level_shift(units, short, var)
    if shift is None or not (shift.long or ess < MIN_INDEP):
        return None, ""
    why = (
        f"level not stable (switches between ~{shift.lo:.2f} and ~{shift.hi:.2f}, around record "
        f"{shift.at * size}); compare stretches of one level, or wait until the switches average out"
    )
    return ((shift.lo, shift.hi) if shift.long else None), why


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
    units = [s / size for s in b.sums[0]]
    r = long_run_variance(units) if mean is not None else None
    if r is None:
        return Estimate(mean, None, None, n, None, None, None, "none (fewer than 3 values)", lo, hi)
    var, indep, phi, k = r.var, r.indep, r.phi, r.size
    var, indep, held, held_why = _regime_gate(units, r.short, var, indep)
    ess = float(n) if var == 0.0 or not var_x else min(float(n), var_x / var)
    levels, why = _unstable(units, r.short, var, size, ess)
    if held is not None:
        levels, why = held, held_why
    method = (
        f"long-run variance of batch means: {b.count // k} batches of {size * k}, AR(1) coefficient {phi:.2f}"
    )
    if step:
        rounding = step * step / 12.0
        # all values equal (up to float noise): the rounding error may be the same in every one
        if not var_x or var_x < 1e-12 * rounding:
            var, indep = max(var, rounding), 1.0
            method = f"all values equal: only the rounding of their print step {step:g}"
        else:
            var = max(var, rounding / ess)
    se = math.sqrt(var)
    return Estimate(mean, se, max(1.0, indep - 1.0), n, ess, indep, phi, method, lo, hi, levels, why)


def _ratio_level1(u: Sequence[float], d_s: Sequence[float]) -> tuple[float, float, float] | None:
    """Level 1 for a ratio: ``u_j = D_j·e_j``, e_j the batch's deviation of acceptance per draft.
    An AR(1) fitted to u itself would see the correlation of e diluted by the spread of D (a
    6-draft interval next to a 600-draft one); so φ is fitted to e, and the variance of Σu is the
    quadratic form of the AR(1) with the drafts as they are, ``σ²·(Σ D_j² + 2·Σ_{j<k} D_j·D_k·
    φ^(k−j))`` with ``σ² = Σu²/ΣD²`` (the lag-0 part is exactly the HC sum Σu²): conditional on
    the drafts, as the ratio itself is."""
    m = len(u)
    e = [x / d if d > 0.0 else 0.0 for x, d in zip(u, d_s)]
    fit = ar1_variance(e)
    if fit is None:
        return None
    mu = math.fsum(u) / m
    ss = math.fsum((x - mu) * (x - mu) for x in u) * m / (m - 1)  # Σu², centred, unbiased
    d2 = math.fsum(map(mul, d_s, d_s))
    if ss <= 0.0 or d2 <= 0.0:
        return 0.0, float(m), fit[2]
    # correlation r(k) = r₁·ρ^(k−1): AR(1) (r₁ = ρ = φ), or AR(1) under white noise (the binomial
    # noise of small intervals) when the lags say so (lrv.ar1_noise); the larger variance is used
    shapes = [(fit[2], fit[2])]
    noisy = ar1_noise(e)
    if noisy is not None:
        shapes.append(noisy)
    best = 0.0
    for r1, rho in shapes:
        g = cross = prev = 0.0
        for d in d_s:  # g_k = Σ_{j<k} D_j·ρ^(k−1−j)
            g = rho * g + prev
            cross += d * g
            prev = d
        best = max(best, ss / d2 * (d2 + 2.0 * r1 * cross))
    return best / (m * m), m * ss / best, fit[2]


def ratio_estimate(
    b: Batches, n: int, num: float, den: float, offset: float, lo: float, hi: float
) -> Estimate:
    """offset + ΣA/ΣD with its leverage-corrected standard error over the batches (channels A,
    D); see the module text."""
    if n == 0 or den <= 0.0:
        return Estimate(None, None, None, n, None, None, None, "none (no counts)", lo, hi)
    ratio = num / den
    value = offset + ratio
    a_s, d_s = b.sums
    m = len(a_s)
    if m < MIN_UNITS_FOR_CI:
        return Estimate(value, None, None, n, None, None, None, "none (fewer than 3 values)", lo, hi)
    total = math.fsum(d_s)
    if total <= 0.0:
        return Estimate(value, None, None, n, None, None, None, "none (no drafts in whole batches)", lo, hi)
    # jackknife / HC3 linearisation: leaving batch j out moves R by −z_j/(ΣD − D_j), i.e. the
    # delta-method value z_j = A_j − R·D_j scaled by 1/(1 − h_j), h_j = D_j/ΣD its leverage
    u = [(a - ratio * d) / max(1e-9, 1.0 - d / total) for a, d in zip(a_s, d_s)]
    r = long_run_variance(u, _ratio_level1(u, d_s))
    assert r is not None
    d_bar = total / m
    units = [value + x / d_bar for x in u]  # each batch's value of the ratio, linearised
    short = r.short / (d_bar * d_bar)
    # regimes are looked for in each batch's acceptance per draft (value + e_j), which the
    # spread of the drafts does not dilute (as at level 1)
    e = [value + x / d if d > 0.0 else value for x, d in zip(u, d_s)]
    fit = ar1_variance(e)
    detect = (e, fit[0]) if fit is not None and fit[0] > 0.0 else None
    var, r_indep, held, held_why = _regime_gate(units, short, r.var / (d_bar * d_bar), r.indep, detect)
    # how many batches the drafts are spread over: (ΣD)²/ΣD² (m when all are equal, ~1 when one
    # batch holds nearly all of them); the interval cannot have more degrees of freedom than that
    spread = total * total / math.fsum(map(mul, d_s, d_s))
    # the variance rests on Σu²: with heavy-tailed drafts a few batches carry it, and it has
    # about (Σu²)²/Σu⁴ terms' worth of degrees of freedom (Satterthwaite)
    u2 = [x * x for x in u]
    terms = math.fsum(u2) ** 2 / max(1e-300, math.fsum(map(mul, u2, u2)))
    indep = min(r_indep, spread, terms)
    zz = math.fsum(map(mul, u, u)) / max(1, m - 1) * b.size / (d_bar * d_bar)
    ess = float(n) if var == 0.0 else min(float(n), zz / var, spread * b.size)
    levels, why = _unstable(units, short, var, b.size, ess)
    if held is not None:
        levels, why = held, held_why
    if spread * b.size < MIN_INDEP:
        why = (
            f"drafts concentrated: the largest interval holds {max(d_s) / total:.0%} of all drafts "
            f"(about {spread * b.size:.1f} intervals' worth); wait for more intervals"
        )
    method = (
        f"ratio of sums, jackknife-linearised, long-run variance over {m // r.size} batches of "
        f"{b.size * r.size}, AR(1) coefficient {r.phi:.2f}, drafts spread over {spread:.1f} batches"
    )
    return Estimate(
        value, math.sqrt(var), max(1.0, indep - 1.0), n, ess, indep, r.phi, method, lo, hi, levels, why
    )
