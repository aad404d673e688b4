"""A counter's values at the steps of a Prometheus range query, made into exact counts per step
(shared by the fleet view and the history source of one instance), and each step as a record of
a log (:func:`step_records`, :func:`step_columns`).

A step's count is the difference of the counter's raw values between two consecutive steps; a
value lower than the one before, or a step where the counter's ``_created`` time changed (a restart
whose new count already exceeds the old one at the next scrape), is a counter reset: the new value
is what was counted since the restart.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass

from tui.core.model.columns import RecordColumns
from tui.core.model.quantities import column_names
from tui.core.model.records import RATE_DRAFTS


def points(values: list) -> list[tuple[float, float]]:
    """A matrix series' [[t, "v"], ...] as (t, v) with finite v."""
    ts, vs = point_arrays(values)
    return list(zip(ts, vs))


def point_arrays(values: list) -> tuple[array, array]:
    """:func:`points` as two arrays of doubles (times, values): 16 bytes a point, not ~110."""
    ts, vs = array("d"), array("d")
    for t, v in values:
        try:
            x = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(x):
            ts.append(float(t))
            vs.append(x)
    return ts, vs


def increments(
    pts: list[tuple[float, float]], restarts: set[float] | None = None
) -> tuple[dict[float, float], int]:
    """Step time -> the counter's increase since the step before; and how many resets. A reset is
    a drop, or a step in ``restarts`` (the counter's ``_created`` time changed there): the value
    is then what was counted since the restart."""
    out: dict[float, float] = {}
    resets = 0
    for (_, a), (t, b) in zip(pts, pts[1:]):
        if b < a or (restarts and t in restarts):
            resets += 1
            out[t] = b  # counted from zero since the restart
        else:
            out[t] = b - a
    return out, resets


def restart_steps(created: list[tuple[float, float]]) -> set[float]:
    """The steps at which a ``_created`` time changed."""
    return {t for (_, a), (t, b) in zip(created, created[1:]) if b != a}


def nonfinite(values: list) -> int:
    """How many of a matrix series' samples are not finite numbers (NaN, ±Inf, garbage)."""
    n = 0
    for _, v in values:
        try:
            x = float(v)
        except (TypeError, ValueError):
            n += 1
            continue
        if not math.isfinite(x):
            n += 1
    return n


def paired_increments(
    num: list[tuple[float, float]],
    den: list[tuple[float, float]],
    restarts: set[float] | None = None,
) -> tuple[dict[float, tuple[float, float, float]], set[float]]:
    """Step time -> (Δnum, Δden, seconds spanned) over the steps where *both* counters have a
    finite value; and how many resets. A step where either one is missing or was not a number
    (NaN samples are dropped by :func:`points`) is left out of both, so an increment of one
    counter spanning several steps is paired with the other counter's increment over the same
    span, never with a one-step increment. A reset (a drop in either counter, or a ``_created``
    change inside the span) counts from zero since the restart, as :func:`increments` does; the
    second value is the set of the steps where one was seen."""
    dn = dict(num)
    common = [(t, dn[t], v) for t, v in den if t in dn]
    rs = sorted(restarts) if restarts else []
    out: dict[float, tuple[float, float, float]] = {}
    resets: set[float] = set()
    j = 0
    for (t0, a0, d0), (t1, a1, d1) in zip(common, common[1:]):
        while j < len(rs) and rs[j] <= t0:
            j += 1
        restarted = j < len(rs) and rs[j] <= t1
        if restarted or a1 < a0 or d1 < d0:
            resets.add(t1)
            out[t1] = (a1, d1, t1 - t0)
        else:
            out[t1] = (a1 - a0, d1 - d0, t1 - t0)
    return out, resets


@dataclass(slots=True)
class StepRecord:
    """One step of a counters family's instance, as a record of a log: the accepted tokens and
    drafts between two samples (paired: :func:`paired_increments`), the seconds spanned, the
    draft tokens over the same samples, the generated tokens per second and the running
    requests, where the family exports them."""

    t: float
    accepted: float
    drafts: float
    span: float
    drafted: float | None = None
    throughput: float | None = None
    running: float | None = None

    @property
    def accept_len(self) -> float:
        return 1.0 + self.accepted / self.drafts


def step_records(
    series: dict[str, list[tuple[float, float]]], restarts: set[float]
) -> tuple[list[StepRecord], set[float]]:
    """The steps of one instance's counters (``series``: quantity -> its (t, raw value) points;
    ``restarts``: the steps where a ``_created`` time changed), in time order, and the steps
    where a counter reset. The one reading of a counters instance: the fleet's row
    (:func:`tui.core.fleet.rows.counters_instance`) and its pane
    (:class:`tui.core.sources.prom.history.PromHistorySource`) both read these."""
    drafts = series.get("drafts", [])
    pairs, resets = paired_increments(series.get("accepted", []), drafts, restarts)
    tok, _ = paired_increments(series.get("draft_tokens", []), drafts, restarts)
    gen, _ = increments(series.get("gen_tokens", []), restarts)
    run = dict(series.get("running", []))
    out = []
    for t in sorted(pairs):
        a, d, span = pairs[t]
        r = run.get(t)
        out.append(
            StepRecord(
                t,
                a,
                d,
                span,
                drafted=tok[t][0] if t in tok else None,
                throughput=gen[t] / span if t in gen and span > 0 else None,
                running=r if r is not None and math.isfinite(r) else None,
            )
        )
    return out, resets


def step_columns(family: str, steps: list[StepRecord]) -> RecordColumns:
    """Drafting steps (``drafts`` > 0) as a run of record columns, the fields a ``/metrics``
    record of the family fills (accept len = 1 + accepted / drafts, the counts, throughput,
    running requests; the rate defined per proposed draft), for a log's statistics
    (:meth:`tui.core.stats.segments.SourceStats.add_columns`).

    The draft tokens are not a step's column: the bounds they imply (accepted at most drafted,
    accept len at most 1 + k) hold for a window's sums, not for one step, because the counters
    of one scrape are not read at one instant (a server increments drafts, draft tokens and
    accepted tokens one after another), so a step may read 31 accepted of 30 drafted tokens and
    the next one 29; the fleet bounds the window's interval by 1 + k instead."""
    n = len(steps)
    values = {f: array("d", [math.nan]) * n for f in column_names()}

    def col(xs) -> array:
        return array("d", [math.nan if x is None else x for x in xs])

    values["timestamp"] = array("d", [r.t for r in steps])
    values["accept_len"] = array("d", [1.0 + r.accepted / r.drafts for r in steps])
    values["accepted"] = array("d", [r.accepted for r in steps])
    values["num_drafts"] = array("d", [r.drafts for r in steps])
    values["throughput"] = col([r.throughput for r in steps])
    values["running_req"] = col([r.running for r in steps])
    return RecordColumns(family, "metrics", n, values, rate_definition=RATE_DRAFTS)
