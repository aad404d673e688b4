"""A counter's values at the steps of a Prometheus range query, made into exact counts per step
(shared by the fleet view and the history source of one instance).

A step's count is the difference of the counter's raw values between two consecutive steps; a
value lower than the one before, or a step where the counter's ``_created`` time changed (a restart
whose new count already exceeds the old one at the next scrape), is a counter reset: the new value
is what was counted since the restart.
"""

from __future__ import annotations

import math


def points(values: list) -> list[tuple[float, float]]:
    """A matrix series' [[t, "v"], ...] as (t, v) with finite v."""
    out = []
    for t, v in values:
        try:
            x = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(x):
            out.append((float(t), x))
    return out


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
