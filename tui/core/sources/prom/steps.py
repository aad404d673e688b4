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
