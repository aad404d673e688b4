"""The load-adjusted A/B: accept len compared within batch-size bins (the bins of
:mod:`tui.core.stats.load`).

The strata are the bins where both sides have at least :data:`MIN_COMMON` records (the others are left out and counted in ``excluded_a`` / ``_b``). Bins
are not merged here: inside a merged stratum the two sides could sit at different batch sizes
again. Per stratum ``dₛ = B − A``; overall ``Σ wₛ·dₛ`` with ``wₛ`` the combined share of the
common records in stratum ``s`` (both sides weighted alike: a direct standardisation). The strata
of one side interleave in time and share its slow noise (the load and the traffic mix move
together), so their errors are correlated and the sum of stratum variances was too small (A/A
pairs called different in 17% at φ 0.9). Each side's variance is that of its per-record influence
values in log order, through the long-run variance estimator of every other interval
(:mod:`tui.core.stats.influence`), with its degrees of freedom, and never below the sum of the
strata's own variances as if independent (``Σ wₛ²·seₛ²``; what an influence series that is
mostly zeros can miss, when a side visits the common batch sizes only now and then); A and B are
independent. A mean of printed values keeps the floor of their rounding (``Σ wₛ²·h²/12/nₛ``).
The verdict follows the main rules (:mod:`tui.core.stats.compare`): ``insufficient`` unless each side has at least ``MIN_N`` records
and an effective sample size of at least ``MIN_INDEP`` in the common strata.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tui.core.stats.compare import HIGHER, INSUFFICIENT, LOWER, MIN_N, NO_DIFFERENCE, POOLED, short_of
from tui.core.stats.compare import MEAN_OF_LINES as LINES
from tui.core.stats.estimate import MIN_INDEP, Estimate
from tui.core.stats.influence import side_variance
from tui.core.stats.load import MIN_COMMON, LoadStrata, bin_range
from tui.core.stats.tdist import t975

LOAD_DIFFERS = 1.5  # mean batch sizes further apart than this factor: "the load differs"


@dataclass(slots=True)
class _Stratum:
    bins: list[int]
    a: Estimate
    b: Estimate


def compare_load_adjusted(
    a: LoadStrata, b: LoadStrata, mean_run_a: float | None, mean_run_b: float | None
) -> dict:
    """``comparison.accept_len_load_adjusted`` (see the module text)."""
    est = POOLED if a.estimator() == POOLED and b.estimator() == POOLED else LINES
    strata = [
        _Stratum([k], a.bins[k].estimate(est), b.bins[k].estimate(est))
        for k in sorted(set(a.bins) & set(b.bins))
        if a.bins[k].count(est) >= MIN_COMMON and b.bins[k].count(est) >= MIN_COMMON
    ]
    total_a = sum(c.count(est) for c in a.bins.values())
    total_b = sum(c.count(est) for c in b.bins.values())
    n_a = sum(s.a.n for s in strata)
    n_b = sum(s.b.n for s in strata)
    out: dict = {
        "diff": None,
        "ci95": None,
        "verdict": INSUFFICIENT,
        "estimator": est,
        "reason": "",
        "n_a": n_a,
        "n_b": n_b,
        "excluded_a": total_a - n_a,
        "excluded_b": total_b - n_b,
        "strata": [],
        "load": load_words(mean_run_a, mean_run_b),
    }
    tot = n_a + n_b
    diff = 0.0
    weights: dict[int, float] = {}
    ess_a = ess_b = 0.0
    no_se = False
    floor = 0.0  # the rounding of printed values: h²/12 per value (estimate.py)
    apart_a = apart_b = 0.0  # Σ wₛ²·seₛ² per side: the strata as if independent
    for s in strata:
        w = (s.a.n + s.b.n) / tot
        d = None if s.a.value is None or s.b.value is None else s.b.value - s.a.value
        out["strata"].append(
            {
                "running_req": [bin_range(s.bins[0])[0], bin_range(s.bins[-1])[1]],
                "n_a": s.a.n,
                "n_b": s.b.n,
                "mean_a": s.a.value,
                "mean_b": s.b.value,
                "diff": d,
                "weight": w,
            }
        )
        if d is None:
            continue
        diff += w * d
        weights[s.bins[0]] = w
        ess_a += s.a.ess or 0.0
        ess_b += s.b.ess or 0.0
        no_se = no_se or s.a.se is None or s.b.se is None
        apart_a += w * w * (s.a.se or 0.0) ** 2
        apart_b += w * w * (s.b.se or 0.0) ** 2
        if est == LINES:
            for strata_of, e in ((a, s.a), (b, s.b)):
                h = strata_of.bins[s.bins[0]].lines.step
                if h is not None and e.n:
                    floor += w * w * h * h / 12.0 / e.n
    if not strata:
        out["reason"] = (
            f"no batch-size bin with at least {MIN_COMMON} records from each side"
            if total_a and total_b
            else "no records with a batch size on one side"
        )
        return out
    out["diff"] = diff
    if n_a < MIN_N or n_b < MIN_N:
        out["reason"] = (
            f"need at least {MIN_N} records on each side in common batch sizes (have {n_a} and {n_b})"
        )
        return out
    if no_se:
        out["reason"] = "not enough values for an interval in every common batch-size range"
        return out
    va = side_variance(a.time, weights, est == POOLED)
    vb = side_variance(b.time, weights, est == POOLED)
    short = [
        short_of(side, Estimate(None, None, None, n, ess, None, None, ""))
        for side, n, ess in (("A: ", n_a, ess_a), ("B: ", n_b, ess_b))
        if ess < MIN_INDEP
    ]
    for side, sv in (("A: ", va), ("B: ", vb)):
        if sv is not None and sv.indep < MIN_INDEP and not any(x.startswith(side) for x in short):
            short.append(
                f"{side}consecutive records are strongly correlated across the batch sizes: about "
                f"{sv.indep:.0f} independent stretches; wait for more records"
            )
    if short:
        out["reason"] = "; ".join(short) + " (in common batch sizes)"
        return out
    if va is None or vb is None:
        out["reason"] = "not enough records for an interval"
        return out
    # never below the strata as if independent (each stratum's own long-run variance: what an
    # influence series that is mostly zeros, a side that visits the common batch sizes only now and
    # then, can miss)
    var = max(va.var, apart_a) + max(vb.var, apart_b)
    if var == 0.0:  # no spread at all: how precise the values are cannot be measured
        out["reason"] = "no variation on either side: the precision of the values cannot be measured"
        return out
    var = max(var, floor)
    df = min(va.df, vb.df)
    hw = t975(df) * math.sqrt(var)
    lo, hi = diff - hw, diff + hw
    out["ci95"] = [lo, hi]
    out["df"] = df
    out["verdict"] = HIGHER if lo > 0 else LOWER if hi < 0 else NO_DIFFERENCE
    return out


def load_words(mean_a: float | None, mean_b: float | None) -> dict:
    """The two sides' mean batch sizes, their ratio, and a sentence when they differ."""
    ratio = mean_b / mean_a if mean_a and mean_b is not None else None
    text = None
    if ratio is not None and ratio > 0 and (ratio >= LOAD_DIFFERS or ratio <= 1 / LOAD_DIFFERS):
        text = (
            f"B ran at {ratio:.3g}× A's batch size"
            if ratio >= 1
            else f"B ran at 1/{1 / ratio:.3g} of A's batch size"
        )
    return {"mean_running_req_a": mean_a, "mean_running_req_b": mean_b, "ratio": ratio, "note": text}
