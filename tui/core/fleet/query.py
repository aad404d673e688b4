"""The PromQL of the fleet view: a few range queries per refresh for the whole fleet — one per
family and quantity, grouped ``by`` the labels that tell serving instances apart — never one per
instance. The series names come from each family's plug-in (:meth:`Format.fleet`).

Counters are fetched as their raw values at every step of the window (``sum by (...) (x)``), not
as ``increase()``: Prometheus extrapolates ``increase`` to the window's edges by a factor that
differs between two counters, so a ratio of two increases is not the ratio of the counts. The
differences of the raw values between steps are exact counts (a drop is a counter reset: the
server restarted and counts from zero again), and the window's pooled value is their ratio.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tui.core.formats.fleet_names import FleetNames

BASE_LABELS = ("instance", "job")
# labels that describe an instance (shown in its row) when its series carry them
DESCRIPTIVE = ("model_name", "model", "draft", "draft_model", "config", "group", "host", "source")
LABEL_RX = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
MAX_POINTS = 10_000  # Prometheus refuses range queries of more than 11,000 points per series


class SelectorError(ValueError):
    pass


_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_PART_RX = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")


def duration(text: str) -> float:
    """Seconds of a duration: ``90s``, ``30m``, ``2h``, ``1.5h``, ``7d``, ``1w``, or parts
    together (``1d12h``, ``1h30m``); more than 0."""
    t = text.strip().lower().replace(" ", "")
    pos, total = 0, 0.0
    for m in _PART_RX.finditer(t):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if not t or pos != len(t):
        raise SelectorError(
            f"bad duration {text!r}: write a number with s, m, h, d or w (30m, 2h, 7d, 1d12h)"
        )
    if total <= 0:
        raise SelectorError(f"bad duration {text!r}: must be more than 0")
    return total


def end_of(text: str) -> tuple[float | None, float]:
    """Where a window ends: ``now``, ``now-2h`` / ``2h ago`` / ``-2h`` (before Prometheus's
    now), unix seconds, or an ISO 8601 time (UTC unless it says otherwise). Returns (unix
    seconds, None for relative; seconds before now)."""
    from datetime import UTC, datetime

    t = text.strip()
    low = t.lower()
    if low == "now":
        return None, 0.0
    for pre, post in (("now-", ""), ("-", ""), ("", " ago"), ("", "ago")):
        if low.startswith(pre) and low.endswith(post) and (pre or post):
            core = low[len(pre) : len(low) - len(post)] if post else low[len(pre) :]
            try:
                return None, duration(core)
            except SelectorError:
                continue
    try:
        x = float(t)
    except ValueError:
        pass
    else:
        if x > 0:
            return x, 0.0
    try:
        d = datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        raise SelectorError(
            f"bad --end {text!r}: write now, now-2h, 2h ago, unix seconds or an ISO time (2026-01-31T14:00Z)"
        ) from None
    if d.tzinfo is None:
        d = d.replace(tzinfo=UTC)
    return d.timestamp(), 0.0


def matchers(text: str) -> str:
    """A user's label selector as matchers without braces: ``{job="a"}`` or ``job="a"``
    (checked for balanced braces and quotes here; Prometheus checks the rest)."""
    s = text.strip()
    if s.startswith("{") and s.endswith("}"):
        s = s[1:-1].strip()
    if "{" in s or "}" in s:
        raise SelectorError(f'{text!r}: a selector is label matchers like job="inference" (no metric name)')
    if s.count('"') % 2:
        raise SelectorError(f"{text!r}: unbalanced quotes")
    return s


def join(*parts: str) -> str:
    return ", ".join(p for p in parts if p)


def labels_ok(names: list[str]) -> list[str]:
    for n in names:
        if not LABEL_RX.fullmatch(n):
            raise SelectorError(f"{n!r} is not a label name")
    return names


@dataclass(frozen=True, slots=True)
class Query:
    """One range query: the family, the quantity it gives, and its PromQL."""

    family: str
    quantity: str  # accepted, drafts, draft_tokens, gen_tokens, accept_len, throughput, running, created
    promql: str


def by_labels(names: FleetNames, group_by: list[str]) -> list[str]:
    """The labels a family's rows are grouped by: instance and job, the family's own instance
    labels (engine, ranks), the user's grouping labels and the descriptive ones."""
    out: list[str] = []
    for n in (*BASE_LABELS, *names.instance_labels, *group_by, *DESCRIPTIVE):
        if n not in out:
            out.append(n)
    return out


def family_queries(names: FleetNames, selector: str, group_by: list[str]) -> list[Query]:
    """The range queries of one family (``selector``: the user's matchers, without braces)."""
    by = ", ".join(by_labels(names, group_by))
    out: list[Query] = []
    for quantity, s, agg in names.series():
        out.append(Query(names.family, quantity, f"{agg} by ({by}) ({s.selector(selector)})"))
    return out


def step_for(window: float, step: float | None) -> float:
    """The step of the range queries: given, or a sixtieth of the window (at least 1 s), never so
    small that the window has more than :data:`MAX_POINTS` points."""
    s = step if step is not None else max(1.0, window / 60.0)
    return max(s, window / MAX_POINTS)
