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

from tui.core.fleet.rows import Instance
from tui.core.stats.compare import HIGHER, INSUFFICIENT, LOWER, NO_DIFFERENCE
from tui.core.stats.load import bin_of, bin_range
from tui.core.stats.tdist import t975

MIN_UNITS = 2


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
