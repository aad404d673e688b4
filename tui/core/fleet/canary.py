"""The canary verdict at equal load: two groups compared within batch-size strata, with instances
as the unit.

Acceptance falls as batches grow, so a canary that happens to serve lighter traffic looks better
with the same drafts. Where the servers export their running requests (vLLM
``num_requests_running``, llama.cpp ``requests_processing``, TensorRT-LLM
``num_requests_running``), each step's counts go into the half-octave batch-size bin of its running
requests (:func:`tui.core.stats.load.bin_of`, the bins of the log statistics). A bin is *common*
when each group has at least two instances with drafts in it. Each group's adjusted accept len is
``1 + Σ_b w_b · ΣA_gb / ΣD_gb`` over the common bins, with ``w_b`` the share of both groups' drafts
in bin ``b`` (the same weights for both: a direct standardisation); its standard error is the
jackknife over the group's instances (each left out in turn, the weights kept), and B − A is
compared by Welch's t as the raw canary verdict is.
"""

from __future__ import annotations

import math
from collections import defaultdict

from tui.core.fleet.rows import Instance, pooled
from tui.core.stats.compare import HIGHER, INSUFFICIENT, LOWER, MEAN_OF_LINES, NO_DIFFERENCE, POOLED, compare
from tui.core.stats.estimate import Estimate
from tui.core.stats.load import bin_of, bin_range
from tui.core.stats.series import Series
from tui.core.stats.tdist import t975

THESE = "these servers over this window"
POPULATION = "servers drawn like these (instances as the unit)"

MIN_UNITS = 2


def side_steps(members: list[Instance]) -> tuple[list[tuple[float, float, None]], list[float], str]:
    """A side's pooled counts per step: at each step time, Σ accepted and Σ drafts over its
    counters instances (the window's steps, the unit ``summary`` uses: a record of counts);
    for a side of gauges only, the mean of its instances' values per step. (rows, kind)."""
    counters = [i for i in members if i.kind == "counters" and i.counts]
    if counters:
        cells: dict[float, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for inst in counters:
            for t, (a, d, _) in zip(inst.count_times, inst.counts):
                cell = cells[t]
                cell[0] += a
                cell[1] += d
        times = sorted(cells)
        return [(cells[t][0], cells[t][1], None) for t in times], times, "counters"
    vals: dict[float, list[float]] = defaultdict(list)
    for inst in members:
        if inst.kind == "gauge":
            for t, v in inst.steps:
                if v is not None:
                    vals[t].append(v)
    times = sorted(vals)
    return [(math.fsum(vals[t]) / len(vals[t]), 1.0, None) for t in times], times, "gauge"


def _side_estimate(rows: list[tuple[float, float, None]], kind: str, hi: float) -> Estimate:
    if kind == "counters":
        return pooled(rows, hi)
    s = Series()
    s.set_bounds(1.0, math.inf)
    s.add_many([r[0] for r in rows])
    return s.estimate()


def these_servers(a: list[Instance], b: list[Instance]) -> dict:
    """B − A between two sets of servers on their pooled counts over the same window, with the
    estimator and the verdict rule of ``summary`` (:func:`tui.core.stats.compare.compare` on
    :class:`tui.core.stats.pooled.RatioSeries` of the per-step sums: 1 + ΣA/ΣD, the steps as
    records, autocorrelation corrected, at least 30 steps a side). It answers: did *these*
    servers accept more than *those* over this window (a real difference between two servers
    counts)? Not whether any servers drafted like these would (``population``)."""
    ra, ta, ka = side_steps(a)
    rb, tb, kb = side_steps(b)
    out: dict = {"question": THESE, "verdict": INSUFFICIENT, "diff": None, "ci95": None, "reason": ""}
    if not ra or not rb:
        empty = [s for s, r in (("A", ra), ("B", rb)) if not r]
        out["reason"] = f"no drafts in the window on side {' and '.join(empty)}"
        out["a"], out["b"] = _side(a, ra, ta, None), _side(b, rb, tb, None)
        return out
    if ka != kb:
        out["reason"] = "one side reports counts, the other only a gauge: not the same estimator"
        out["a"], out["b"] = _side(a, ra, ta, None), _side(b, rb, tb, None)
        return out
    ea = _side_estimate(ra, ka, _bound(a))
    eb = _side_estimate(rb, kb, _bound(b))
    c = compare(ea, eb, estimator=POOLED if ka == "counters" else MEAN_OF_LINES)
    out.update(
        verdict=c.verdict,
        diff=c.diff,
        ci95=list(c.ci95) if c.ci95 else None,
        df=c.df,
        reason=c.reason,
        estimator=c.estimator,
    )
    out["a"], out["b"] = _side(a, ra, ta, ea), _side(b, rb, tb, eb)
    return out


def _bound(members: list[Instance]) -> float:
    """1 + k of a side (Σ draft tokens / Σ drafts over its instances' steps): the most its
    accept len can be (every draft token accepted)."""
    used = [i for i in members if i.kind == "counters" and i.counts]
    if not used or any(i.k is None for i in used):
        return math.inf
    d = [math.fsum(c[1] for c in i.counts) for i in used]
    total = math.fsum(d)
    return 1.0 + math.fsum((i.k or 0.0) * x for i, x in zip(used, d)) / total if total > 0 else math.inf


def _side(members: list[Instance], rows: list, times: list[float], e: Estimate | None) -> dict:
    ci = e.ci95() if e is not None else None
    return {
        "instances": len(members),
        "units": sum(1 for i in members if i.accept_len is not None),
        "steps": len(rows),
        "accept_len": e.value if e is not None else None,
        "ci95": list(ci) if ci else None,
        "accepted": math.fsum(r[0] for r in rows) if rows else None,
        "drafts": math.fsum(r[1] for r in rows) if rows else None,
        "first_step": times[0] if times else None,
        "last_step": times[-1] if times else None,
    }


def by_bin(inst: Instance) -> dict[int, tuple[float, float]]:
    """Bin -> (Σ accepted, Σ drafts) of an instance's steps with a known batch size."""
    out: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for a, d, running in inst.counts:
        if running is not None and math.isfinite(running) and running >= 0:
            cell = out[bin_of(running)]
            cell[0] += a
            cell[1] += d
    return {b: (v[0], v[1]) for b, v in out.items()}


def _value(cells: list[dict[int, tuple[float, float]]], weights: dict[int, float]) -> float | None:
    total = 0.0
    for b, w in weights.items():
        a = math.fsum(c[b][0] for c in cells if b in c)
        d = math.fsum(c[b][1] for c in cells if b in c)
        if d <= 0:
            return None
        total += w * a / d
    return 1.0 + total


def _jackknife(cells: list[dict[int, tuple[float, float]]], weights: dict[int, float]) -> float | None:
    m = len(cells)
    loo = [_value(cells[:i] + cells[i + 1 :], weights) for i in range(m)]
    vals = [v for v in loo if v is not None]
    if len(vals) < m or m < MIN_UNITS:
        return None
    mean = math.fsum(vals) / m
    return math.sqrt((m - 1) / m * math.fsum((v - mean) ** 2 for v in vals))


def load_adjusted(a: list[Instance], b: list[Instance]) -> dict:
    """B − A at equal batch size (see the module text), or ``insufficient`` with the reason."""
    ca = [c for c in map(by_bin, a) if c]
    cb = [c for c in map(by_bin, b) if c]
    out: dict = {"verdict": INSUFFICIENT, "diff": None, "ci95": None, "strata": [], "reason": ""}
    if len(ca) < MIN_UNITS or len(cb) < MIN_UNITS:
        out["reason"] = "batch sizes (running requests) exported by fewer than 2 instances on a side"
        return out

    def units(cells: list[dict], k: int) -> int:
        return sum(1 for c in cells if k in c and c[k][1] > 0)

    common = sorted(
        k for k in {k for c in ca + cb for k in c} if units(ca, k) >= MIN_UNITS and units(cb, k) >= MIN_UNITS
    )
    if not common:
        out["reason"] = "no batch-size range where both groups have 2 instances drafting"
        return out
    drafts = {k: math.fsum(c[k][1] for c in ca + cb if k in c) for k in common}
    total = math.fsum(drafts.values())
    weights = {k: drafts[k] / total for k in common}
    va, vb = _value(ca, weights), _value(cb, weights)
    sa, sb = _jackknife(ca, weights), _jackknife(cb, weights)
    out["strata"] = [{"running": list(bin_range(k)), "weight": weights[k]} for k in common]
    out["accept_len_a"], out["accept_len_b"] = va, vb
    if va is None or vb is None or sa is None or sb is None:
        out["reason"] = "an instance left out leaves a stratum empty: too few instances per stratum"
        return out
    diff = vb - va
    out["diff"] = diff
    var_a, var_b = sa * sa, sb * sb
    if var_a + var_b == 0.0:
        out["reason"] = "no variation between instances"
        return out
    dfa, dfb = len(ca) - 1.0, len(cb) - 1.0
    df = (var_a + var_b) ** 2 / (var_a * var_a / dfa + var_b * var_b / dfb)
    hw = t975(df) * math.sqrt(var_a + var_b)
    lo, hi = diff - hw, diff + hw
    out.update(ci95=[lo, hi], df=df, verdict=HIGHER if lo > 0 else LOWER if hi < 0 else NO_DIFFERENCE)
    return out
