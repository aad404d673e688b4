"""One row per serving instance from the fleet's range answers: the pooled accept len of the
window with its 95% interval (the project's estimator over the per-step counts), the trend, the
throughput, and flags (restart, stale, stuck near 1).

A step's counts are the differences of a counter's raw values between consecutive steps; a value
lower than the one before is a counter reset (a restart): the new value is what was counted since
(the counts between the last sample before the restart and the restart are not in Prometheus and
are not guessed). A step without drafts is idle: no value, never a zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from tui.core.sources.prom.steps import increments, restart_steps
from tui.core.stats.estimate import Estimate
from tui.core.stats.pooled import RatioSeries
from tui.core.stats.series import Series

STUCK = 1.1  # accept len whose interval lies below this: drafts almost never accepted


@dataclass
class Instance:
    """One serving instance of one family."""

    family: str
    kind: str  # counters / gauge
    labels: dict[str, str]
    key: tuple
    steps: list[tuple[float, float | None]] = field(default_factory=list)  # (t, accept len) trend
    accepted: float = 0.0
    drafts: float = 0.0
    draft_tokens: float | None = None
    estimate: Estimate | None = None
    throughput: float | None = None
    running: float | None = None
    resets: int = 0
    last_seen: float | None = None  # the newest step with data
    flags: list[str] = field(default_factory=list)
    vs_group: dict[str, Any] | None = None
    counts: list[tuple[float, float, float | None]] = field(default_factory=list)  # (a, d, running) per step

    @property
    def name(self) -> str:
        lab = self.labels
        extra = [f"{k}={lab[k]}" for k in ("engine", "dp_rank", "tp_rank", "source") if lab.get(k)]
        return " ".join([lab.get("instance") or lab.get("job") or "?", *extra])

    @property
    def accept_len(self) -> float | None:
        return self.estimate.value if self.estimate is not None else None

    @property
    def accept_rate(self) -> float | None:
        if self.kind != "counters" or not self.draft_tokens:
            return None
        return self.accepted / self.draft_tokens


def counters_instance(
    family: str, key: tuple, labels: dict[str, str], series: dict[str, list[tuple[float, float]]], step: float
) -> Instance:
    """An instance of a counters family from its raw counter values per quantity."""
    inst = Instance(family, "counters", labels, key)
    restarts = restart_steps(series.get("created", []))
    acc, r1 = increments(series.get("accepted", []), restarts)
    dr, r2 = increments(series.get("drafts", []), restarts)
    inst.resets = max(r1, r2)
    ratio = RatioSeries(offset=1.0)
    ratio.set_bounds(1.0, math.inf)
    nums, dens = [], []
    running = dict(series.get("running") or [])
    for t in sorted(dr):
        d = dr[t]
        a = acc.get(t)
        if a is None or d <= 0:
            inst.steps.append((t, None))  # idle (or a step the other counter lacks): no value
            continue
        nums.append(a)
        dens.append(d)
        inst.steps.append((t, 1.0 + a / d))
        inst.counts.append((a, d, running.get(t)))
    ratio.add_many(nums, dens)
    inst.accepted, inst.drafts = math.fsum(nums), math.fsum(dens)
    inst.estimate = ratio.estimate() if nums else None
    tok, _ = increments(series.get("draft_tokens", []), restarts)
    if tok:
        inst.draft_tokens = math.fsum(v for t, v in tok.items() if t in dr and dr[t] > 0)
    gen, _ = increments(series.get("gen_tokens", []), restarts)
    span = len(gen) * step
    if gen and span > 0:
        inst.throughput = math.fsum(gen.values()) / span
    run = series.get("running") or []
    if run:
        inst.running = math.fsum(v for _, v in run) / len(run)
    seen = [t for t, _ in series.get("drafts", [])]
    inst.last_seen = max(seen) if seen else None
    return inst


def gauge_instance(
    family: str, key: tuple, labels: dict[str, str], series: dict[str, list[tuple[float, float]]]
) -> Instance:
    """An instance of a gauge family (SGLang): the mean of the gauge's values over the window,
    one value per step, with the batch-means interval of a plain mean (labelled: not pooled)."""
    inst = Instance(family, "gauge", labels, key)
    # below 1 is no accept len: the gauge's value before the first decode (SGLang sets 0)
    pts = [(t, v) for t, v in series.get("accept_len", []) if v >= 1.0]
    vs = Series()
    vs.set_bounds(1.0, math.inf)
    for t, v in pts:
        inst.steps.append((t, v))
    vs.add_many([v for _, v in pts])
    inst.estimate = vs.estimate() if pts else None
    tp = series.get("throughput") or []
    if tp:
        inst.throughput = math.fsum(v for _, v in tp) / len(tp)
    inst.last_seen = max((t for t, _ in pts), default=None)
    return inst


def flag(inst: Instance, end: float, step: float) -> None:
    """The row's flags: restart (a counter reset), stale (no sample in the last steps), idle (no
    draft in the window), stuck (accept len near 1)."""
    f = inst.flags
    if inst.resets:
        f.append(f"restart ×{inst.resets}" if inst.resets > 1 else "restart")
    if inst.last_seen is None or end - inst.last_seen > 2.5 * step:
        age = "never" if inst.last_seen is None else f"{end - inst.last_seen:.0f} s ago"
        f.append(f"stale (last sample {age})")
    if inst.estimate is None or inst.estimate.value is None:
        f.append("idle (no drafts in the window)")
        return
    ci = inst.estimate.ci95()
    if ci is not None and ci[1] < STUCK:
        f.append("stuck near 1")
