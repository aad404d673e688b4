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
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, overload

from tui.core.sources.prom.steps import StepRecord, increments, restart_steps, step_columns, step_records
from tui.core.stats import diagnostics
from tui.core.stats.checks import Refused, clean
from tui.core.stats.drift import long_run_variance
from tui.core.stats.estimate import Estimate
from tui.core.stats.pooled import RatioSeries
from tui.core.stats.segments import Segment, SourceStats
from tui.core.stats.series import Series

STUCK = 1.1  # accept len whose interval lies below this: drafts almost never accepted


class Packed(Sequence):
    """Rows of numbers (None kept as NaN) held as one array of doubles per column, read back as
    tuples: a step's (t, accept len) or (accepted, drafts, running) costs 8 bytes a number, not
    ~120 bytes a row as a tuple of floats (10,000 instances' 60 steps: 20 MB, not 160)."""

    __slots__ = ("_cols",)

    def __init__(self, rows: Iterable[Sequence[float | None]], width: int) -> None:
        self._cols = tuple(array("d") for _ in range(width))
        for row in rows:
            for col, x in zip(self._cols, row):
                col.append(math.nan if x is None else x)

    def __len__(self) -> int:
        return len(self._cols[0])

    def column(self, i: int) -> array:
        """Column ``i`` as it is held (NaN for None)."""
        return self._cols[i]

    def _row(self, i: int) -> tuple:
        return tuple(None if (x := c[i]) != x else x for c in self._cols)

    @overload
    def __getitem__(self, i: int) -> tuple: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple]: ...
    def __getitem__(self, i: int | slice) -> tuple | list[tuple]:
        if isinstance(i, slice):
            return [self._row(k) for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._row(i)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)


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
    count_times: list[float] = field(default_factory=list)  # the time of each of ``counts``
    reset_times: list[float] = field(default_factory=list)  # the steps where a counter reset
    samples: int = 0  # steps at which both counters (or the gauge) had a finite value
    nonfinite: int = 0  # samples that were NaN / Inf (refused)
    k: float | None = None  # draft tokens per draft over the window (the bound: accept len <= 1 + k)
    shift: LevelShift | None = None  # a level shift inside the window: the value is from after it
    window_estimate: Estimate | None = None  # the whole window's, when a shift split it
    down_for: float | None = None  # seconds its target has been down (``up`` = 0), None: up
    step: float = 0.0  # seconds between its steps
    # the log statistics' checks (:func:`checked`): the values refused, and the drafting steps
    # left out because one of their values was
    refused: Refused | None = None
    refused_steps: int = 0

    def pack(self) -> None:
        """The steps and counts held compact (:class:`Packed`), once the instance is made: they
        are read from then on, never added to."""
        if not isinstance(self.steps, Packed):
            self.steps = Packed(self.steps, 2)  # type: ignore[assignment]
            self.counts = Packed(self.counts, 3)  # type: ignore[assignment]
            self.count_times = array("d", self.count_times)  # type: ignore[assignment]

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


def pooled(counts: Sequence[tuple[float, float, float | None]], hi: float = math.inf) -> Estimate:
    """1 + Σa/Σd of steps' counts with the project's pooled interval (bounded by ``hi``)."""
    ratio = RatioSeries(offset=1.0)
    ratio.set_bounds(1.0, hi)
    ratio.add_many([c[0] for c in counts], [c[1] for c in counts])
    return ratio.estimate()


def counters_instance(
    family: str, key: tuple, labels: dict[str, str], series: dict[str, list[tuple[float, float]]], step: float
) -> Instance:
    """An instance of a counters family from its raw counter values per quantity.

    Steps are paired: a step's accepted and drafts increments span the same two samples (a step
    where either counter was missing or NaN is left out of both, see
    :func:`tui.core.sources.prom.steps.paired_increments`). Each step is then a record of a log's
    kind (:func:`tui.core.sources.prom.steps.step_records`, the records the instance's own pane
    reads) and goes through a log's statistics: the same checks (:func:`checked`: a step whose
    value is refused is left out of every sum here too), and, when asked, a segment per restart,
    the rate definition and the diagnostics (:func:`shared_statistics`)."""
    inst = Instance(family, "counters", labels, key, step=step)
    restarts = restart_steps(series.get("created", []))
    acc_pts, dr_pts = series.get("accepted", []), series.get("drafts", [])
    steps, reset_at = step_records(series, restarts)
    inst.resets = len(reset_at)
    inst.reset_times = sorted(reset_at)
    inst.samples = len({t for t, _ in acc_pts} & {t for t, _ in dr_pts})
    drafting = [r for r in steps if r.drafts > 0]
    kept = checked(inst, drafting)
    for r in steps:
        if r.drafts <= 0:
            inst.steps.append((r.t, None))  # idle: no value, never a zero
        elif r.t in kept:
            inst.steps.append((r.t, r.accept_len))
            inst.counts.append((r.accepted, r.drafts, r.running))
            inst.count_times.append(r.t)
    tokens = [r.drafted for r in drafting if r.t in kept]
    if tokens and all(x is not None and x > 0 for x in tokens):
        td, dd = math.fsum(x or 0.0 for x in tokens), math.fsum(c[1] for c in inst.counts)
        inst.draft_tokens = td
        inst.k = td / dd if dd > 0 else None
    hi = 1.0 + inst.k if inst.k else math.inf
    if inst.counts:
        inst.estimate = pooled(inst.counts, hi)
        inst.shift = level_shift(inst.counts, inst.count_times)
        if inst.shift is not None:  # the row's value: the part after the shift
            inst.window_estimate = inst.estimate
            inst.estimate = pooled(inst.counts[inst.shift.at :], hi)
    used = inst.counts[inst.shift.at :] if inst.shift is not None else inst.counts
    inst.accepted = math.fsum(c[0] for c in used)
    inst.drafts = math.fsum(c[1] for c in used)
    if inst.draft_tokens is not None and inst.shift is not None:
        inst.draft_tokens = (inst.k or 0.0) * inst.drafts
    gen = sorted(series.get("gen_tokens", []))
    if len(gen) >= 2 and gen[-1][0] > gen[0][0]:
        inc, _ = increments(gen, restarts)
        inst.throughput = math.fsum(inc.values()) / (gen[-1][0] - gen[0][0])
    run = series.get("running") or []
    if run:
        inst.running = math.fsum(v for _, v in run) / len(run)
    seen = [t for t, _ in dr_pts]
    inst.last_seen = max(seen) if seen else None
    return inst


def checked(inst: Instance, steps: list[StepRecord]) -> set[float]:
    """The drafting steps the log statistics' checks keep (their times), as a log's records are
    checked (:func:`tui.core.stats.checks.clean` on the steps' record columns: finite, within
    each quantity's physical range; the bounds by the draft tokens hold for the window's sums,
    not a step's, see :func:`~tui.core.sources.prom.steps.step_columns`). A step with a refused
    value is left out of both sums, as a NaN sample is; what was refused is the row's."""
    if not steps:
        return set()
    v, refused, _ = clean(step_columns(inst.family, steps), None)
    if not refused.total():
        return {r.t for r in steps}
    inst.refused = refused
    keep = {r.t for i, r in enumerate(steps) if all(v[f][i] == v[f][i] for f in _CHECKED)}
    inst.refused_steps = len(steps) - len(keep)
    return keep


_CHECKED = ("accept_len", "accepted", "num_drafts")


def shared_statistics(inst: Instance) -> SourceStats:
    """The instance's kept steps through a log's statistics, as its pane reads them: record
    columns (:func:`~tui.core.sources.prom.steps.step_columns`) into a
    :class:`~tui.core.stats.segments.SourceStats`, a new segment at each restart, the values
    :func:`checked` refused counted in it. Built when asked (``fleet --json``, a flag that needs
    it), not kept: 10,000 instances' statistics would cost memory for nothing."""
    stats = SourceStats(inst.name)
    if inst.refused is not None:
        stats.refused.merge(inst.refused)
        stats.current.refused.merge(inst.refused)
    steps = [StepRecord(t, a, d, 0.0, running=r) for t, (a, d, r) in zip(inst.count_times, inst.counts)]
    if not steps:
        return stats
    cols = step_columns(inst.family, steps)
    resets = list(inst.reset_times)
    start = 0
    for i, r in enumerate(steps):
        if resets and r.t >= resets[0]:  # the first kept step at or after a restart opens a segment
            while resets and r.t >= resets[0]:
                resets.pop(0)
            if i > start:
                stats.add_columns(cols.slice(start, i))
                start = i
            seg = stats.new_segment("counter_reset", None, r.t)
            seg.markers.append("counter_reset")
    stats.add_columns(cols.slice(start, len(steps)))
    return stats


def log_view(inst: Instance) -> dict:
    """What a log's statistics say of a counters instance (``fleet --json``): its segments (a
    restart opens one), the current segment's rate definition and diagnostics."""
    if inst.kind != "counters":
        return {"segments": [], "rate_definition": None, "diagnostics": []}
    stats = shared_statistics(inst)
    cur = stats.current
    return {
        "segments": [segment_summary(seg) for seg in stats.segments if seg.records],
        "rate_definition": cur.rate_definition().to_dict(),
        "diagnostics": diagnostics.of_segment(cur),
    }


def no_draft_accepted(inst: Instance) -> str | None:
    """The log statistics' warning that no draft is accepted (its current segment), asked only
    of an instance that accepted nothing after its last restart."""
    if inst.kind != "counters" or not inst.counts:
        return None
    last = inst.reset_times[-1] if inst.reset_times else -math.inf
    if any(a > 0 for t, (a, _, _) in zip(inst.count_times, inst.counts) if t >= last):
        return None
    return diagnostics.no_draft_accepted(shared_statistics(inst).current)


def segment_summary(seg: Segment) -> dict:
    """A segment of an instance's window (from its start or a restart): its pooled accept len
    with the interval of the log statistics (the same estimator and bounds as a pane's)."""
    p = seg.all.pooled_len
    e = p.estimate() if p.n else None
    ci = e.ci95() if e is not None else None
    return {
        "index": seg.index,
        "reason": seg.reason,
        "start": seg.start_ts,
        "records": seg.records,
        "accept_len": e.value if e is not None else None,
        "ci95": list(ci) if ci else None,
        "drafts": p.denominator if p.n else None,
    }


def gauge_instance(
    family: str, key: tuple, labels: dict[str, str], series: dict[str, list[tuple[float, float]]]
) -> Instance:
    """An instance of a gauge family (SGLang): the mean of the gauge's values over the window,
    one value per step, with the batch-means interval of a plain mean (labelled: not pooled)."""
    inst = Instance(family, "gauge", labels, key)
    inst.samples = len(series.get("accept_len", []))
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


SHIFT_MIN_SIDE = 5  # steps on each side of a level shift, at least
SHIFT_CRIT = 4.0  # the standardised CUSUM's limit (see :func:`level_shift`)
SHIFT_MARGIN = 2.0  # φ of the long-run variance this many standard errors up


@dataclass(slots=True)
class LevelShift:
    """Where an instance's level moved inside the window: the step index it moved at, its time,
    and the pooled accept len before and after."""

    at: int
    t: float | None
    before: float
    after: float
    z: float

    def text(self) -> str:
        when = ""
        if self.t is not None:
            when = " at " + datetime.fromtimestamp(self.t, UTC).strftime("%H:%M:%SZ")
        way = "down" if self.after < self.before else "up"
        return f"shift {way}{when} ({self.before:.2f} → {self.after:.2f})"


def level_shift(
    counts: list[tuple[float, float, float | None]], times: list[float] | None = None
) -> LevelShift | None:
    """A lasting change of level inside the window (a bad deploy, a new draft), wherever it is.

    The linearised residuals of the pooled ratio, ``yₜ = (aₜ − R·dₜ)/d̄`` (R = Σa/Σd), have
    partial sums ``Sₖ``; the split is where the standardised CUSUM ``|Sₖ| / √(k(n − k)/n)`` is
    largest (at least :data:`SHIFT_MIN_SIDE` steps a side, so a shift late in the window is
    found as well as one in its middle), and the statistic is that maximum over σ, the long-run
    standard deviation (:func:`tui.core.stats.drift.long_run_variance`: AR(1) over blocks of 1,
    2, 4… steps) of the residuals around *each side's own* ratio (the
    shift itself does not inflate σ; φ :data:`SHIFT_MARGIN` standard errors up). A shift is
    said beyond :data:`SHIFT_CRIT`. Seeded (60 steps, AR(1) acceptance of sd 0.1, 400 windows a
    cell, bench in tests/unit/test_fleet.py): false 0% / 0% / 7% at φ 0 / 0.5 / 0.9; a 0.3
    drop in the middle found in 100% / 84% / 64%, at step 52 of 60 in 86% / 45% / 31%; 2.4 →
    1.2 at step 52 found, at its step ±1, in 100% / 100% / 92%."""
    n = len(counts)
    if n < 2 * SHIFT_MIN_SIDE:
        return None
    a = [c[0] for c in counts]
    d = [c[1] for c in counts]
    total_d = math.fsum(d)
    if total_d <= 0:
        return None
    r = math.fsum(a) / total_d
    dbar = total_d / n
    best, at, s = 0.0, 0, 0.0
    for k in range(1, n - SHIFT_MIN_SIDE + 1):
        s += (a[k - 1] - r * d[k - 1]) / dbar
        if k < SHIFT_MIN_SIDE:
            continue
        z = abs(s) / math.sqrt(k * (n - k) / n)
        if z > best:
            best, at = z, k
    if at == 0:
        return None
    d1, d2 = math.fsum(d[:at]), math.fsum(d[at:])
    if d1 <= 0 or d2 <= 0:
        return None
    r1, r2 = math.fsum(a[:at]) / d1, math.fsum(a[at:]) / d2
    resid = [(x - (r1 if i < at else r2) * y) / dbar for i, (x, y) in enumerate(zip(a, d))]
    var = long_run_variance(resid, least=8, margin=SHIFT_MARGIN)
    if not var > 0.0:
        return None
    z = best / math.sqrt(var)
    if z <= SHIFT_CRIT:
        return None
    t = times[at] if times is not None and at < len(times) else None
    return LevelShift(at, t, 1.0 + r1, 1.0 + r2, z)


def flag(inst: Instance, end: float, step: float) -> None:
    """The row's flags: down (its target's ``up`` is 0), restart (a counter reset), stale (no
    sample in the last steps), too little history, idle (the counters did not move), stuck
    (accept len near 1), a level shift inside the window, NaN samples refused."""
    f = inst.flags
    if inst.down_for is not None:
        f.append(f"down for {_age(inst.down_for)} (up = 0)")
    if inst.resets:
        f.append(f"restart ×{inst.resets}" if inst.resets > 1 else "restart")
    if inst.nonfinite:
        f.append(f"{inst.nonfinite} NaN sample{'s' * (inst.nonfinite != 1)} refused")
    if inst.refused_steps:
        n = inst.refused_steps
        f.append(f"{n} step{'s' * (n != 1)} refused (values out of range)")
    stuck = no_draft_accepted(inst)  # the log statistics' warning
    if stuck is not None:
        f.append(f"{stuck}: no draft accepted")
    if inst.last_seen is None or end - inst.last_seen > 2.5 * step:
        age = "never" if inst.last_seen is None else f"{end - inst.last_seen:.0f} s ago"
        f.append(f"stale (last sample {age})")
    if inst.estimate is None or inst.estimate.value is None:
        if inst.samples < 2:
            f.append(f"{inst.samples} sample{'s' * (inst.samples != 1)} so far")
        else:
            f.append(f"idle (no drafts in {inst.samples} samples)")
        return
    ci = inst.estimate.ci95()
    if ci is None and inst.estimate.n < 3:
        f.append(f"{inst.samples} samples so far: no interval yet")
    if ci is not None and ci[1] < STUCK:
        f.append("stuck near 1")
    if inst.shift is not None:
        f.append(inst.shift.text())


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
