"""A/B comparison of two estimates (means of printed values, or pooled ratios of counts).

The difference B − A gets a 95% interval ``diff ± t(df) · √(se_A² + se_B²)``, each se being the
autocorrelation-robust standard error of :mod:`tui.core.stats.estimate` (for means of printed
values never below the rounding of their print step, so two runs of equal values one step apart
are not called different on a zero-width interval) and ``df`` the smaller
of the two sides' degrees of freedom (effectively independent batch means − 1): a little more
conservative than Welch–Satterthwaite. The interval is clamped to what the bounds allow.

The verdict is ``insufficient`` (never higher/lower) when either side has fewer than
:data:`MIN_N` records, an effective sample size below :data:`MIN_INDEP` values (at n=30 with a
lag-1 autocorrelation of 0.9 there are only about 2 independent values), a level that is not
stable (it switched between two levels in a way the interval does not account for), drafts
concentrated in a few intervals (pooled), or no variation at all on either side (its precision
cannot be measured). The reason says which, and how many more records would do. Calibration:
tests/unit/test_calibration.py, tests/unit/test_calibration_cells.py and
bench/bench_calibration.py (the table in docs/statistics.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from tui.core.stats.estimate import MIN_INDEP, Estimate, clamp
from tui.core.stats.tdist import t975

if TYPE_CHECKING:
    from tui.core.stats.metrics import MetricSet

MIN_N = 30  # fewer records than this on either side: "insufficient"

HIGHER, LOWER, NO_DIFFERENCE, INSUFFICIENT = "higher", "lower", "no_difference", "insufficient"
MEAN_OF_LINES, POOLED = "mean_of_lines", "pooled"
ESTIMATOR_WORDS = {
    MEAN_OF_LINES: "mean of printed values",
    POOLED: "pooled: 1 + Σaccepted/Σdrafts",
}
RATE_ESTIMATOR_WORDS = {MEAN_OF_LINES: "mean of printed values", POOLED: "pooled: Σaccepted/Σdrafted"}


class Estimable(Protocol):
    def estimate(self) -> Estimate: ...


@dataclass(slots=True)
class Comparison:
    diff: float | None  # B − A
    ci95: tuple[float, float] | None
    verdict: str  # B relative to A
    n_a: int
    n_b: int
    mean_a: float | None  # the two values compared (means of lines, or pooled values)
    mean_b: float | None
    df: float | None = None
    reason: str = ""
    estimator: str = MEAN_OF_LINES
    ess_a: float | None = None
    ess_b: float | None = None

    def to_dict(self) -> dict:
        return {
            "diff": self.diff,
            "ci95": list(self.ci95) if self.ci95 else None,
            "verdict": self.verdict,
            "estimator": self.estimator,
            "n_a": self.n_a,
            "n_b": self.n_b,
            "effective_n_a": self.ess_a,
            "effective_n_b": self.ess_b,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "df": self.df,
            "reason": self.reason,
        }

    def describe(self, metric: str = "accept len") -> str:
        if self.diff is None or self.ci95 is None:
            return f"{metric}: {self.verdict} ({self.reason})"
        lo, hi = self.ci95
        words = {
            HIGHER: "B higher",
            LOWER: "B lower",
            NO_DIFFERENCE: "no difference",
            INSUFFICIENT: "insufficient data",
        }[self.verdict]
        return f"{metric} B−A {self.diff:+.2f} (95% CI {lo:+.2f} … {hi:+.2f}): {words}"


def short_of(side: str, e: Estimate) -> str:
    """Why one side cannot support a verdict, and how many more records would do (``side``
    prefixes the text, e.g. "A: ")."""
    ess = e.ess if e.ess is not None else 0.0
    need = e.n * MIN_INDEP / ess if ess > 0 else math.inf
    more = (
        f"wait for ~{_round_up(need - e.n)} more records" if math.isfinite(need) else "wait for more records"
    )
    return (
        f"{side}n={e.n} but consecutive values are strongly correlated: about {ess:.0f} independent "
        f"values; {more}"
    )


def _round_up(x: float) -> int:
    """A friendly count: 2 significant digits, rounded up."""
    x = max(1.0, x)
    p = 10 ** max(0, int(math.log10(x)) - 1)
    return int(math.ceil(x / p) * p)


def compare(
    a: Estimable | Estimate, b: Estimable | Estimate, min_n: int = MIN_N, estimator: str = ""
) -> Comparison:
    ea = a if isinstance(a, Estimate) else a.estimate()
    eb = b if isinstance(b, Estimate) else b.estimate()
    est = estimator or MEAN_OF_LINES
    ma, mb = ea.value, eb.value
    base = Comparison(None, None, INSUFFICIENT, ea.n, eb.n, ma, mb, estimator=est, ess_a=ea.ess, ess_b=eb.ess)
    if ma is not None and mb is not None:
        base.diff = mb - ma
    if ea.n < min_n or eb.n < min_n or ma is None or mb is None:
        base.reason = f"need at least {min_n} records on each side (have {ea.n} and {eb.n})"
        return base
    if ea.se is None or eb.se is None or ea.df is None or eb.df is None:
        base.reason = "not enough values for an interval"
        return base
    short = [
        f"{s}{e.why}" if e.why else short_of(s, e)
        for s, e in (("A: ", ea), ("B: ", eb))
        if e.why or (e.ess or 0.0) < MIN_INDEP
    ]
    if short:
        base.reason = "; ".join(short)
        return base
    var = ea.se**2 + eb.se**2
    diff = mb - ma
    lo_b, hi_b = eb.lo - ea.hi, eb.hi - ea.lo  # what the bounds allow for B − A
    if var == 0.0:  # no spread at all: how precise the values are cannot be measured
        base.reason = "no variation on either side: the precision of the values cannot be measured"
        return base
    df = min(ea.df, eb.df)
    hw = t975(df) * math.sqrt(var)
    lo, hi = clamp(diff - hw, lo_b, hi_b), clamp(diff + hw, lo_b, hi_b)
    verdict = HIGHER if lo > 0 else LOWER if hi < 0 else NO_DIFFERENCE
    return Comparison(diff, (lo, hi), verdict, ea.n, eb.n, ma, mb, df, "", est, ea.ess, eb.ess)


def compare_accept_len(a: MetricSet, b: MetricSet) -> Comparison:
    """B − A accept len: pooled (1 + Σaccepted/Σdrafts) when both sides print counts, else the
    mean of the printed values. The comparison names the estimator it used."""
    if a.pooled_len.n and b.pooled_len.n:
        return compare(a.pooled_len, b.pooled_len, estimator=POOLED)
    return compare(a.accept_len, b.accept_len, estimator=MEAN_OF_LINES)


def compare_accept_rate(a: MetricSet, b: MetricSet) -> Comparison:
    """B − A accept rate: pooled Σaccepted/Σdrafted when both sides print counts, else the mean
    of the printed rates."""
    if a.pooled_rate.n and b.pooled_rate.n:
        return compare(a.pooled_rate, b.pooled_rate, estimator=POOLED)
    return compare(a.accept_rate, b.accept_rate, estimator=MEAN_OF_LINES)
