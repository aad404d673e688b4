"""Does speculation pay: accepted and rejected draft tokens per second, the share of output
tokens that came from drafts, and the throughput against a server without speculation.

Per record, where it prints a generation throughput ``T`` (tokens/s; SGLang ``gen throughput``,
vLLM ``Avg generation throughput`` of the paired engine line) and an accept length ``AL`` (printed,
or ``1 + accepted/drafts`` from its counts): every verify step of a request emits ``AL`` tokens,
``AL − 1`` of them accepted drafts, so

* verify steps per second (summed over requests) ``= T / AL``;
* accepted draft tokens/s ``= T · (AL − 1) / AL``;
* rejected (wasted) draft tokens/s ``= T / AL · (d − (AL − 1))``, with ``d`` the draft tokens
  verified per step: ``drafted / drafts`` of the record when it prints counts, else the
  segment's configured drafts per step (vLLM ``num_speculative_tokens``, SGLang
  ``num_draft_tokens − 1``); unknown ``d``: no value.

Each is a streaming :class:`Series` (mean of lines with the autocorrelation-robust interval).
The share of output tokens from drafts is ``(AL − 1) / AL`` of the segment's accept len (pooled
when it has counts), its interval the same transform of the accept len interval (monotone).
A record without ``T`` or ``AL`` adds nothing: values are never filled with zeros.

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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import add, mul, sub, truediv

from tui.core.stats.checks import all_nan
from tui.core.stats.compare import HIGHER, INSUFFICIENT, LOWER, MIN_N, NO_DIFFERENCE, short_of
from tui.core.stats.estimate import MIN_INDEP, Estimate
from tui.core.stats.series import ColumnChunk, Series
from tui.core.stats.tdist import t975

BASELINE = "baseline"
SHORT_RUN = 16  # runs up to this long go in line by line


def _finite(xs: Sequence[float]) -> list[float]:
    return [x for x in xs if x == x and x >= 0.0]


@dataclass(slots=True)
class PayoffChunks:
    """A run reduced for :meth:`Payoff.merge`: accepted draft tokens/s as a chunk, and per line
    (where T and AL are known) verify steps/s ``T/AL``, ``AL``, and drafted tokens per step from
    the counts (None: the line prints none; the segment's config gives it)."""

    accepted: ColumnChunk | None
    steps: list[float]
    al: list[float]
    d: list[float] | None


def payoff_chunks(v: Mapping[str, Sequence[float]], cumulative: bool) -> PayoffChunks | None:
    """Pure function of a run's checked values (worker processes can do it)."""
    t = v["throughput"]
    if not len(t) or all_nan(t):
        return None
    al: Sequence[float] = v["accept_len"]
    counts = not cumulative and not all_nan(v["accepted"])
    nd = v["num_drafts"]
    if counts:  # AL from the counts where the line prints no AL
        acc = v["accepted"]
        al = [x if x == x else (1.0 + a / d if d > 0 else math.nan) for x, a, d in zip(al, acc, nd)]
    steps = list(map(truediv, t, al))  # T / AL (AL ≥ 1: checked)
    keep = None
    if sum(steps) != sum(steps):  # T or AL missing on some lines
        keep = [x == x for x in steps]
        steps = list(compress(steps, keep))
        al = list(compress(al, keep))
        t = list(compress(t, keep))
    if not steps:
        return None
    accepted = ColumnChunk.of(list(map(sub, t, steps)))
    d = None
    if counts:
        dr, nd2 = v["drafted"], nd
        if keep is not None:
            dr, nd2 = list(compress(dr, keep)), list(compress(nd, keep))
        d = [y / x if x > 0 else math.nan for x, y in zip(nd2, dr)]
    return PayoffChunks(accepted, steps, list(al), d)


class Payoff:
    """Accepted and rejected draft tokens per second of one segment (see the module text)."""

    __slots__ = ("accepted_tps", "rejected_tps")

    def __init__(self) -> None:
        self.accepted_tps = Series(window=1)
        self.rejected_tps = Series(window=1)
        for s in (self.accepted_tps, self.rejected_tps):
            s.set_bounds(0.0, math.inf)

    def add(self, v: Mapping[str, Sequence[float]], cumulative: bool, drafts_per_step: int | None) -> None:
        t = v["throughput"]
        if len(t) > SHORT_RUN:
            self.merge(payoff_chunks(v, cumulative), drafts_per_step)
            return
        # a short run (live logs): line by line, the same formulas as payoff_chunks
        al, acc, nd, dr = v["accept_len"], v["accepted"], v["num_drafts"], v["drafted"]
        counts = not cumulative and not all_nan(acc)
        for i, ti in enumerate(t):
            a = al[i]
            if a != a and counts:
                a = 1.0 + acc[i] / nd[i] if nd[i] > 0 else math.nan
            if not (ti == ti and a == a):
                continue
            steps = ti / a
            self.accepted_tps.add(ti - steps)
            d = (dr[i] / nd[i] if nd[i] > 0 else math.nan) if counts else drafts_per_step
            if d is not None and d == d:
                w = steps * (d + 1.0 - a)
                if w >= 0.0:
                    self.rejected_tps.add(w)

    def merge(self, pc: PayoffChunks | None, drafts_per_step: int | None) -> None:
        """Fold in :func:`payoff_chunks` of a run (possibly built in a worker process); the rejected
        draft tokens need the drafts per step, known here (the segment's config)."""
        if pc is None:
            return
        if pc.accepted is not None:
            self.accepted_tps.merge_chunk(pc.accepted)
        steps, al = pc.steps, pc.al
        if pc.d is not None:
            d1: Iterable[float] = map(add, pc.d, repeat(1.0, len(steps)))
        elif drafts_per_step:
            d1 = repeat(drafts_per_step + 1.0, len(steps))
        else:
            return
        waste = map(sub, d1, al)  # d − (AL − 1)
        self.rejected_tps.add_many(_finite(list(map(mul, steps, waste))))  # T/AL · (d − (AL − 1))

    def to_dict(self, throughput: Series, accept_len: Estimate) -> dict:
        share = None
        if accept_len.value is not None:
            ci = accept_len.ci95()
            share = {
                "value": 1.0 - 1.0 / accept_len.value,
                "ci95": [1.0 - 1.0 / ci[0], 1.0 - 1.0 / ci[1]] if ci else None,
                "formula": "(AL − 1) / AL",
            }
        return {
            "generation_throughput": _mean(throughput),
            "accepted_tokens_per_s": _mean(self.accepted_tps),
            "rejected_tokens_per_s": _mean(self.rejected_tps),
            "draft_share": share,
        }


def _mean(s: Series) -> dict:
    if not s.n:
        return {"mean": None, "ci95": None, "n": 0, "effective_n": None}
    e = s.estimate()
    ci = e.ci95()  # a rate per second is never negative
    return {"mean": e.value, "ci95": [max(0.0, ci[0]), ci[1]] if ci else None, "n": s.n, "effective_n": e.ess}


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
