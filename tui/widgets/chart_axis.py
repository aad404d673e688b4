"""The chart's axes, pure: round value ticks for the y axis and record numbers, wall-clock ticks
for a time axis (the log's own clock) and elapsed-time ticks (``+5 min``), as many as the width
holds; a series cut into runs at its gaps (a restart, an idle stretch: never bridged by a line);
labels cut with ``…``; and the points thinned to what the plot's dots can show."""

from __future__ import annotations

import math
import time

# time ticks: steps in seconds, the finest first
TIME_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def nice_ticks(lo: float, hi: float, count: int) -> list[float]:
    """Round tick values (steps of 1, 2, 2.5 or 5 × 10^k) covering [lo, hi]."""
    raw = (hi - lo) / max(1, count)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    step = next((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), 10 * mag)
    first = math.ceil(lo / step - 1e-9) * step
    out = []
    x = first
    while x <= hi + 1e-9:
        out.append(round(x, 10))
        x += step
    return out


def whole_ticks(lo: float, hi: float, count: int) -> list[float]:
    """Ticks for an x axis of record numbers: whole numbers when the span allows."""
    ticks = nice_ticks(lo, hi, count)
    if hi - lo >= count and any(t != int(t) for t in ticks):
        ticks = [t for t in nice_ticks(math.ceil(lo), math.floor(hi), count) if t == int(t)]
    return ticks


def tick_text(t: float) -> str:
    return f"{t:,.0f}" if t == int(t) else f"{t:g}"


GAP_FACTOR = 5.0  # a step of x this many times the usual one is a gap (an idle stretch): not bridged
TICK_CELLS = 10  # cells per x tick at least (its label and the space to the next)


def tick_count(cols: int) -> int:
    """How many x ticks an axis of ``cols`` cells holds (at least 2)."""
    return max(2, cols // TICK_CELLS)


def _steps(lo: float, hi: float, count: int) -> tuple[float, list[float]]:
    """The finest round step of :data:`TIME_STEPS` that gives at most ``count`` ticks in [lo, hi]
    (and two at least, where a finer step gives them), with its ticks."""
    span = max(hi - lo, 1e-9)
    k = next((i for i, s in enumerate(TIME_STEPS) if span / s <= max(1, count)), len(TIME_STEPS) - 1)
    while True:
        step = TIME_STEPS[k]
        ticks = []
        t = float(math.ceil(lo / step) * step)
        while t <= hi + 1e-6:
            ticks.append(float(t))
            t += step
        if len(ticks) >= 2 or k == 0:
            return step, ticks
        k -= 1


def time_ticks(lo: float, hi: float, count: int) -> tuple[list[float], list[str]]:
    """Wall-clock ticks for [lo, hi] in the log's naive seconds (its printed fields, timegm'd, as
    :mod:`tui.core.pipeline.logclock` keeps them): round steps (10 s, 1 min, 5 min, 1 h, …)
    aligned to the log's clock, ``HH:MM`` or ``HH:MM:SS``, with the date on the first tick of a
    day when the span crosses midnight; at most ``count``, two at least where the span has them."""
    step, ticks = _steps(lo, hi, count)
    fmt = "%H:%M:%S" if step < 60 else "%H:%M"
    days = {time.gmtime(t)[:3] for t in (lo, hi)}
    labels, seen = [], set()
    for t in ticks:
        lt = time.gmtime(t)
        day = lt[:3]
        text = time.strftime(fmt, lt)
        if len(days) > 1 and day not in seen:
            text = time.strftime("%m-%d ", lt) + text
        seen.add(day)
        labels.append(text)
    return ticks, labels


def elapsed_ticks(lo: float, hi: float, count: int) -> tuple[list[float], list[str]]:
    """Ticks for an axis of seconds since a start: round steps, labelled ``+30 s``, ``+5 min``,
    ``+1 h 30``."""
    step, ticks = _steps(lo, hi, count)
    return ticks, [elapsed_text(t) for t in ticks]


def elapsed_text(t: float) -> str:
    s = int(round(t))
    if s < 60:
        return f"+{s} s"
    if s < 3600:
        return f"+{s // 60} min" if s % 60 == 0 else f"+{s // 60}:{s % 60:02d}"
    h, m = divmod(s // 60, 60)
    return f"+{h} h" if not m else f"+{h} h {m:02d}"


def runs(xs: list[float], starts: set[int] | None = None) -> list[tuple[int, int]]:
    """``xs`` (ascending) cut into runs ``[i, j)`` at its gaps: where a new run is said to start
    (``starts``: the first point of a segment after a restart) and where x steps more than
    :data:`GAP_FACTOR` times its usual (median) step (an idle stretch, a restart's downtime)."""
    n = len(xs)
    if n < 2:
        return [(0, n)] if n else []
    steps = sorted(b - a for a, b in zip(xs, xs[1:]) if b > a)
    usual = steps[len(steps) // 2] if steps else 0.0
    cuts = set(starts or ())
    if usual > 0:
        cuts.update(i for i in range(1, n) if xs[i] - xs[i - 1] > GAP_FACTOR * usual)
    out, first = [], 0
    for i in sorted(c for c in cuts if 0 < c < n):
        out.append((first, i))
        first = i
    out.append((first, n))
    return out


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters: cut with ``…`` (never mid-word without it)."""
    if len(text) <= width:
        return text
    return text[: max(0, width - 1)].rstrip() + "…" if width > 0 else ""


def thin(xs: list[float], ys: list[float], buckets: int) -> tuple[list[float], list[float]]:
    """At most ``buckets`` points: the mean of the points in each of ``buckets`` equal spans of x
    (a braille plot cannot show more: two dots a cell)."""
    if len(xs) <= buckets or buckets < 2:
        return xs, ys
    x0, x1 = min(xs), max(xs)
    span = x1 - x0
    if span <= 0:
        return [x0], [sum(ys) / len(ys)]
    acc: dict[int, list[float]] = {}
    for x, y in zip(xs, ys):
        k = min(buckets - 1, int((x - x0) / span * buckets))
        a = acc.get(k)
        if a is None:
            acc[k] = [x, y, 1.0]
        else:
            a[0] += x
            a[1] += y
            a[2] += 1.0
    out = [acc[k] for k in sorted(acc)]
    return [a[0] / a[2] for a in out], [a[1] / a[2] for a in out]
