"""Does speculation pay: accepted and rejected draft tokens per second, the share of output
tokens that came from drafts, and the throughput against a server without speculation.

From a segment's mean generation throughput ``T`` (tokens/s; SGLang ``gen throughput``, vLLM
``Avg generation throughput`` of the paired engine line) and its accept length ``AL`` (pooled
``1 + Σaccepted/Σdrafts`` when the lines print counts, else the mean of the printed values): every
verify step of a request emits ``AL`` tokens, ``AL − 1`` of them accepted drafts, so

* verify steps per second (summed over requests) ``= T / AL``;
* accepted draft tokens/s ``= T · (AL − 1) / AL``;
* rejected (wasted) draft tokens/s ``= T / AL · (d − (AL − 1))``, with ``d`` the draft tokens
  verified per step: ``Σdrafted / Σdrafts`` when the lines print counts, else the segment's
  configured drafts per step (vLLM ``num_speculative_tokens``, SGLang ``num_draft_tokens − 1``);
  unknown ``d``: null;
* the share of output tokens from drafts ``= (AL − 1) / AL``.

Intervals: the delta method on the two estimates (each with its autocorrelation-robust standard
error, taken as independent), t with the smaller of their degrees of freedom, clamped at 0. The
values are computed from the segment's statistics, with no work per record. Nothing is filled in:
no throughput or no acceptance gives null.

**Throughput ratio** (``comparison.throughput``): ``R = T̄_spec / T̄_base``, the ratio of the two
sides' mean generation throughputs. With a source labelled ``baseline`` (``baseline=PATH``: a
server without speculation) the other side is the numerator; otherwise B / A. Interval: the delta
method on the log scale, ``var(log R) = (se_B / T̄_B)² + (se_A / T̄_A)²`` (each se the batch-means
standard error), ``R · exp(± t · √var)`` with the smaller side's degrees of freedom. The verdict
(``higher`` / ``lower`` than 1, ``no_difference``, ``insufficient``) follows the rules of
:mod:`tui.core.stats.compare`.
"""

from __future__ import annotations

import math

from tui.core.stats.compare import HIGHER, INSUFFICIENT, LOWER, MIN_N, NO_DIFFERENCE, short_of
from tui.core.stats.estimate import MIN_INDEP, Estimate
from tui.core.stats.series import Series
from tui.core.stats.tdist import t975

BASELINE = "baseline"


def _value(v: float | None, grad: tuple[float, float] | None, t: Estimate, al: Estimate, n: int) -> dict:
    """A derived rate with its delta-method interval (``grad``: ∂/∂T, ∂/∂AL)."""
    ci = None
    if v is not None and grad is not None and None not in (t.se, al.se, t.df, al.df):
        assert t.se is not None and al.se is not None and t.df is not None and al.df is not None
        hw = t975(min(t.df, al.df)) * math.sqrt((grad[0] * t.se) ** 2 + (grad[1] * al.se) ** 2)
        ci = [max(0.0, v - hw), v + hw]
    return {"mean": v, "ci95": ci, "n": n if v is not None else 0}


def speculation(throughput: Series, al: Estimate, d: float | None) -> dict:
    """``segments[].speculation`` (see the module text)."""
    t = throughput.estimate() if throughput.n else None
    a = al.value
    gen: dict = {"mean": None, "ci95": None, "n": 0}
    acc = dict(gen)
    rej = dict(gen)
    if t is not None and t.value is not None:
        ci = t.ci95()
        gen = {"mean": t.value, "ci95": [max(0.0, ci[0]), ci[1]] if ci else None, "n": throughput.n}
        if a is not None and a >= 1.0:
            T = t.value
            acc = _value(T * (1.0 - 1.0 / a), (1.0 - 1.0 / a, T / (a * a)), t, al, throughput.n)
            if d is not None and d + 1.0 >= a:
                rej = _value(
                    T * ((d + 1.0) / a - 1.0),
                    ((d + 1.0) / a - 1.0, -T * (d + 1.0) / (a * a)),
                    t,
                    al,
                    throughput.n,
                )
    share = None
    if a is not None:
        ci = al.ci95()
        share = {
            "value": 1.0 - 1.0 / a,
            "ci95": [1.0 - 1.0 / ci[0], 1.0 - 1.0 / ci[1]] if ci else None,
            "formula": "(AL − 1) / AL",
        }
    return {
        "generation_throughput": gen,
        "accepted_tokens_per_s": acc,
        "rejected_tokens_per_s": rej,
        "draft_share": share,
        "drafts_per_step": d,
    }


def is_baseline(label: str | None) -> bool:
    return (label or "").strip().lower() == BASELINE


def throughput_ratio(ea: Estimate, eb: Estimate, baseline: str | None) -> dict:
    """``comparison.throughput`` from the two sides' mean generation throughputs (see the module
    text). ``baseline``: the side (``"a"`` / ``"b"``) labelled baseline, whose throughput is the
    denominator; None: B / A."""
    base, spec = (eb, ea) if baseline == "b" else (ea, eb)
    out: dict = {
        "ratio": None,
        "ci95": None,
        "verdict": INSUFFICIENT,
        "baseline": baseline,
        "formula": "A / B" if baseline == "b" else "B / A",
        "mean_a": ea.value,
        "mean_b": eb.value,
        "n_a": ea.n,
        "n_b": eb.n,
        "reason": "",
    }
    if base.value is None or spec.value is None or base.value <= 0:
        out["reason"] = "no generation throughput on " + (
            "either side" if base.value == spec.value else "one side"
        )
        return out
    r = spec.value / base.value
    out["ratio"] = r
    if base.n < MIN_N or spec.n < MIN_N:
        out["reason"] = f"need at least {MIN_N} throughput values on each side (have {ea.n} and {eb.n})"
        return out
    if base.se is None or spec.se is None or base.df is None or spec.df is None or spec.value <= 0:
        out["reason"] = "not enough values for an interval"
        return out
    short = [short_of(s, e) for s, e in (("A: ", ea), ("B: ", eb)) if (e.ess or 0.0) < MIN_INDEP]
    if short:
        out["reason"] = "; ".join(short)
        return out
    var = (base.se / base.value) ** 2 + (spec.se / spec.value) ** 2
    hw = t975(min(base.df, spec.df)) * math.sqrt(var)
    lo, hi = r * math.exp(-hw), r * math.exp(hw)
    out["ci95"] = [lo, hi]
    out["verdict"] = HIGHER if lo > 1.0 else LOWER if hi < 1.0 else NO_DIFFERENCE
    return out
