"""A/B comparison of two means from batch-means statistics (Welch, with Satterthwaite df)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tui.core.stats.series import Series
from tui.core.stats.tdist import t975

MIN_N = 30  # fewer records than this on either side: "insufficient"

HIGHER, LOWER, NO_DIFFERENCE, INSUFFICIENT = "higher", "lower", "no_difference", "insufficient"


@dataclass(slots=True)
class Comparison:
    diff: float | None  # mean(B) - mean(A)
    ci95: tuple[float, float] | None
    verdict: str  # B relative to A
    n_a: int
    n_b: int
    mean_a: float | None
    mean_b: float | None
    df: float | None = None
    reason: str = ""

    def to_dict(self) -> dict:
        return {
            "diff": self.diff,
            "ci95": list(self.ci95) if self.ci95 else None,
            "verdict": self.verdict,
            "n_a": self.n_a,
            "n_b": self.n_b,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "df": self.df,
            "reason": self.reason,
        }

    def describe(self, metric: str = "accept len") -> str:
        if self.diff is None or self.ci95 is None:
            return f"{metric}: {self.verdict} ({self.reason})"
        lo, hi = self.ci95
        words = {HIGHER: "B higher", LOWER: "B lower", NO_DIFFERENCE: "no difference",
                 INSUFFICIENT: "insufficient data"}[self.verdict]
        return f"{metric} B−A {self.diff:+.2f} (95% CI {lo:+.2f} … {hi:+.2f}): {words}"


def compare(a: Series, b: Series, min_n: int = MIN_N) -> Comparison:
    ma, mb = a.mean, b.mean
    base = Comparison(None, None, INSUFFICIENT, a.n, b.n, ma, mb)
    if a.n < min_n or b.n < min_n or ma is None or mb is None:
        base.reason = f"need at least {min_n} records on each side (have {a.n} and {b.n})"
        if ma is not None and mb is not None:
            base.diff = mb - ma
        return base
    sa, sb = a.se_df(), b.se_df()
    if sa is None or sb is None:
        base.reason = "not enough batches for an interval"
        return base
    (se_a, df_a), (se_b, df_b) = sa, sb
    var = se_a**2 + se_b**2
    diff = mb - ma
    if var == 0.0:
        verdict = NO_DIFFERENCE if diff == 0 else (HIGHER if diff > 0 else LOWER)
        return Comparison(diff, (diff, diff), verdict, a.n, b.n, ma, mb, math.inf, "no variation")
    df = var**2 / ((se_a**4 / df_a if df_a else 0.0) + (se_b**4 / df_b if df_b else 0.0))
    hw = t975(df) * math.sqrt(var)
    lo, hi = diff - hw, diff + hw
    verdict = HIGHER if lo > 0 else LOWER if hi < 0 else NO_DIFFERENCE
    return Comparison(diff, (lo, hi), verdict, a.n, b.n, ma, mb, df)
