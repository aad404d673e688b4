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
