"""One refresh of the fleet: the range queries of every family the project reads (at once), the
instances they describe, their groups, and the canary comparison when asked for.

A family whose series Prometheus does not have gives no instance (and no error); a query that
fails is an error of the whole refresh (one line, :class:`PromError`), except that Prometheus's
warnings are passed on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from tui.core.fleet import query as q
from tui.core.fleet.canary import load_adjusted
from tui.core.fleet.groups import GroupEstimate, GroupSums, against_group, group_estimate, welch
from tui.core.fleet.rows import Instance, counters_instance, flag, gauge_instance
from tui.core.formats import registry
from tui.core.formats.fleet_names import SPECWATCH, FleetNames
from tui.core.sources.prom.api import PromAPI, all_of
from tui.core.sources.prom.steps import points


def fleet_families() -> list[FleetNames]:
    """The spec-decode series of every family the project reads, and specwatch's exporter's."""
    out = [n for f in registry.FORMATS if (n := f.fleet()) is not None]
    return [*out, SPECWATCH]


@dataclass(frozen=True)
class FleetQuery:
    """What to ask: the window (seconds, ending at Prometheus's now), the step, the user's selector
    (matchers), the labels rows are grouped by, and two selectors to compare (or None)."""

    window: float = 1800.0
    step: float | None = None
    selector: str = ""
    group_by: tuple[str, ...] = ()
    compare: tuple[str, str] | None = None


@dataclass
class Fleet:
    """A refresh's answer."""

    url: str
    end: float
    window: float
    step: float
    instances: list[Instance] = field(default_factory=list)
    groups: list[GroupEstimate] = field(default_factory=list)
    comparison: dict | None = None
    warnings: list[str] = field(default_factory=list)
    queries: int = 0
    group_by: tuple[str, ...] = ()
    query: FleetQuery | None = None  # what was asked (a refresh reuses the answer within a step)


def group_name(inst: Instance, group_by: Iterable[str]) -> str:
    keys = list(group_by)
    if not keys:
        return "all"
    return ",".join(f"{k}={inst.labels.get(k, '')}" for k in keys)


async def refresh(api: PromAPI, fq: FleetQuery, previous: Fleet | None = None) -> Fleet:
    """Query the whole fleet once (a few range queries per family, run concurrently). The window
    ends on a whole step of Prometheus's clock: until the next step begins the answer cannot
    change, so ``previous`` (the last answer to the same query) is returned again after one
    ``time()`` query instead of asking for every series again (the screen refreshes every few
    seconds; a step is a sixtieth of the window)."""
    selector = q.matchers(fq.selector)
    group_by = q.labels_ok(list(fq.group_by))
    step = q.step_for(fq.window, fq.step)
    now = await api.server_time()
    end = math.floor(now / step) * step  # whole steps of Prometheus's clock
    if previous is not None and previous.end == end and previous.step == step and previous.query == fq:
        previous.queries = 1
        return previous
    start = end - fq.window
    fams = fleet_families()
    jobs = [(names, qq) for names in fams for qq in q.family_queries(names, selector, group_by)]
    answers = await all_of(api.query_range(qq.promql, start - step, end, step) for _, qq in jobs)
    fleet = Fleet(api.url, end, fq.window, step, queries=len(jobs) + 1, group_by=tuple(group_by), query=fq)
    per: dict[tuple[str, tuple], dict] = {}
    for (names, qq), ans in zip(jobs, answers):
        fleet.warnings += [w for w in ans.warnings if w not in fleet.warnings]
        by = q.by_labels(names, group_by)
        for s in ans.series:
            labels = {k: str(v) for k, v in (s.get("metric") or {}).items() if k in by and v != ""}
            key = tuple(labels.get(k, "") for k in (*q.BASE_LABELS, *names.instance_labels))
            slot = per.setdefault((names.family, key), {"names": names, "labels": {}, "series": {}})
            slot["labels"].update(labels)
            slot["series"][qq.quantity] = points(s.get("values") or [])
    for (family, key), slot in sorted(per.items()):
        names = slot["names"]
        if names.kind == "counters":
            if "drafts" not in slot["series"]:
                continue  # only a load gauge of a server without spec decoding
            inst = counters_instance(family, key, slot["labels"], slot["series"], step)
        else:
            if "accept_len" not in slot["series"]:
                continue
            inst = gauge_instance(family, key, slot["labels"], slot["series"])
        flag(inst, end, step)
        fleet.instances.append(inst)
    by_group: dict[str, list[Instance]] = {}
    for inst in fleet.instances:
        by_group.setdefault(group_name(inst, group_by), []).append(inst)
    for name, members in sorted(by_group.items()):
        fleet.groups.append(group_estimate(name, members))
        sums = GroupSums.of(members)
        for inst in members:
            inst.vs_group = against_group(inst, sums, name)
            if inst.vs_group and inst.vs_group["verdict"] == "lower":
                inst.flags.append("below its group")
    if fq.compare is not None:
        fleet.comparison = await compare_groups(api, fq, fleet)
    return fleet


async def compare_groups(api: PromAPI, fq: FleetQuery, fleet: Fleet) -> dict:
    """B − A between the instances matching each of two selectors (run as their own queries, so
    a selector may use any label Prometheus has, not only the grouping ones)."""
    assert fq.compare is not None
    sides = []
    members: list[list[Instance]] = []
    for sel in fq.compare:
        sub = FleetQuery(fq.window, fleet.step, q.join(q.matchers(fq.selector), q.matchers(sel)), fq.group_by)
        part = await refresh(api, sub)
        fleet.queries += part.queries
        fleet.warnings += [w for w in part.warnings if w not in fleet.warnings]
        sides.append(group_estimate(sel, part.instances))
        members.append(part.instances)
    out = welch(sides[0], sides[1])
    out["a"]["selector"], out["b"]["selector"] = fq.compare
    out["load_adjusted"] = load_adjusted(members[0], members[1])
    return out
