"""One refresh of the fleet: the range queries of every family the project reads (at once), the
instances they describe, their groups, and the canary comparison when asked for.

A family whose series Prometheus does not have gives no instance (and no error); a query that
fails is an error of the whole refresh (one line, :class:`PromError`), except that Prometheus's
warnings are passed on.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from tui.core.fleet import query as q
from tui.core.fleet.canary import POPULATION, load_adjusted, these_servers
from tui.core.fleet.groups import GroupEstimate, GroupSums, against_group, group_estimate, welch
from tui.core.fleet.rows import Instance, _age, counters_instance, flag, gauge_instance
from tui.core.formats import registry
from tui.core.formats.fleet_names import SPECWATCH, FleetNames
from tui.core.sources.prom.api import PromAPI, Result, all_of
from tui.core.sources.prom.steps import nonfinite, point_arrays, points

YIELD_EVERY = 100  # instances made between two yields to the event loop (~35 ms at most)


def fleet_families() -> list[FleetNames]:
    """The spec-decode series of every family the project reads, and specwatch's exporter's."""
    out = [n for f in registry.FORMATS if (n := f.fleet()) is not None]
    return [*out, SPECWATCH]


@dataclass(frozen=True)
class FleetQuery:
    """What to ask: the window (seconds), the step (None: from the history Prometheus has), the
    user's selector (matchers), the labels rows are grouped by, two selectors to compare (or
    None), and where the window ends: ``end`` (unix seconds) or ``end_ago`` seconds before
    Prometheus's now."""

    window: float = 1800.0
    step: float | None = None
    selector: str = ""
    group_by: tuple[str, ...] = ()
    compare: tuple[str, str] | None = None
    end: float | None = None
    end_ago: float = 0.0
    # the least automatic step (the screen: its refresh interval, so that a young history is not
    # fetched again whole at every refresh at one-second steps); --step is kept as given
    min_step: float = 0.0


@dataclass
class Fleet:
    """A refresh's answer. ``window`` is what was asked; ``span`` the part of it with history
    (the range actually queried), ``interval`` the scrape interval seen (None: not measured)."""

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
    span: float = 0.0
    interval: float | None = None


def group_name(inst: Instance, group_by: Iterable[str]) -> str:
    keys = list(group_by)
    if not keys:
        return "all"
    return ",".join(f"{k}={inst.labels.get(k, '')}" for k in keys)


@dataclass(frozen=True, slots=True)
class History:
    """What Prometheus holds for the fleet's series in the window: the scrape interval (the
    median gap between samples, None when no series has two samples in the probe) and the most
    samples one series has in the window."""

    interval: float | None
    samples: int


def _main_series(fams: list[FleetNames]) -> str:
    names = sorted({s.name for n in fams if (s := n.drafts or n.accept_len) is not None})
    return "|".join(names)


async def probe(
    api: PromAPI,
    fams: list[FleetNames],
    selector: str,
    at: float,
    window: float,
    interval: float | None = None,
) -> tuple[History, int]:
    """The scrape interval (from the raw samples of the last minute, or of the last ten when the
    last minute holds fewer than two a series; ``interval`` when already known) and the largest
    sample count of one series in the window: the range and the step of the queries follow from
    them (:func:`plan`). Two instant queries, three for scrapes slower than 30 s."""
    sel = q.join(f'__name__=~"{_main_series(fams)}"', selector)
    calls = [api.query(f"max(count_over_time({{{sel}}}[{_dur(window)}]))", at)]
    if interval is None:
        calls.append(api.query(f"{{{sel}}}[{_dur(min(window, 60.0))}]", at))
    got = await all_of(calls)
    samples = 0
    for s in got[0].series:
        try:
            samples = max(samples, int(float(s["value"][1])))
        except (KeyError, IndexError, TypeError, ValueError):
            pass
    asked = len(calls)
    if interval is None:
        interval = _median_gap(got[1].series)
        if interval is None and window > 60.0:
            # fewer than two samples a minute: scrapes slower than 30 s, whose samples over ten
            # minutes are few (the last minute's were asked first: at 1 s scrapes ten minutes of
            # every series would be a large answer)
            more = await api.query(f"{{{sel}}}[{_dur(min(window, 600.0))}]", at)
            asked += 1
            interval = _median_gap(more.series)
    return History(interval, samples), asked


def _median_gap(series: list[dict]) -> float | None:
    gaps: list[float] = []
    for s in series[:500]:  # enough series for a median
        ts = [float(t) for t, _ in s.get("values") or []]
        gaps += [b - a for a, b in zip(ts, ts[1:]) if b > a]
    if not gaps:
        return None
    gaps.sort()
    return gaps[len(gaps) // 2]


def plan(window: float, step: float | None, hist: History | None) -> tuple[float, float]:
    """(span, step): the range queried ends at the window's end and starts at the first sample
    the window holds (one interval early, so the first sample is there), never before the
    window; the step is given, or the scrape interval while the span holds at most 120 samples,
    else about a sixtieth of the span in whole scrape intervals (a fresh Prometheus of 30 s at
    1 s scrapes is read at 1 s steps, not in one 30 s step)."""
    span = window
    if hist is not None and hist.interval and hist.samples:
        span = min(window, (hist.samples + 1) * hist.interval)
    if step is None:
        low = hist.interval if hist is not None and hist.interval else None
        if low is None:
            step = max(1.0, span / 60.0)
        elif span / low <= 120:  # a young history: every sample is a step
            step = low
        else:  # whole scrape intervals, about 60 steps
            step = low * math.ceil(span / 60.0 / low)
    return span, q.step_for(span, step)


def _dur(seconds: float) -> str:
    return f"{max(1, int(math.ceil(seconds)))}s"


async def refresh(api: PromAPI, fq: FleetQuery, previous: Fleet | None = None) -> Fleet:
    """Query the whole fleet once (a few range queries per family, run concurrently). The range
    and step follow the history Prometheus has (:func:`probe`, :func:`plan`). The window ends
    on a whole step of Prometheus's clock: until the next step begins the answer cannot change,
    so ``previous`` (the last answer to the same query) is returned again after one ``time()``
    query instead of asking for every series again."""
    selector = q.matchers(fq.selector)
    group_by = q.labels_ok(list(fq.group_by))
    now = await api.server_time()
    until = fq.end if fq.end is not None else now - fq.end_ago
    fams = fleet_families()
    known = previous.interval if previous is not None and previous.query == fq else None
    hist, asked = await probe(api, fams, selector, until, fq.window, known)
    span, step = plan(fq.window, fq.step, hist)
    if fq.step is None and step < fq.min_step:
        step = q.step_for(span, fq.min_step)
    # whole steps: the range moves only when a step begins (a history whose first sample moves
    # by a scrape, as old samples leave the window, asked whole again at every scrape otherwise)
    span = min(fq.window, math.ceil(span / step - 1e-9) * step)
    end = math.floor(until / step) * step  # whole steps of Prometheus's clock
    if (
        previous is not None
        and previous.end == end
        and previous.step == step
        and previous.span == span
        and previous.query == fq
    ):
        previous.queries = 1 + asked
        return previous
    start = end - span
    jobs = [(names, qq) for names in fams for qq in q.family_queries(names, selector, group_by)]
    fleet = Fleet(
        api.url,
        end,
        fq.window,
        step,
        queries=len(jobs) + 2 + asked,
        group_by=tuple(group_by),
        query=fq,
        span=span,
        interval=hist.interval,
    )
    up_call = api.query_range(f"max by (instance, job) (up{{{selector}}})", start, end, step)
    per, (up,) = await all_slots(
        fleet,
        jobs,
        [api.query_range(qq.promql, start - step, end, step) for _, qq in jobs],
        group_by,
        [up_call],
    )
    young = _young(per, step, hist.interval)
    if young:
        # instances younger than a few steps (a new server in an old fleet): their own steps at
        # the scrape interval over the last steps, so two samples give a value
        fine = hist.interval or step
        tail = [api.query_range(qq.promql, end - 3 * step - fine, end, fine) for _, qq in jobs]
        fleet.queries += len(tail)
        fine_per, _ = await all_slots(fleet, jobs, tail, group_by)
        for k in young:
            if k in fine_per:
                per[k] = fine_per[k]
                per[k]["step"] = fine
    for n, (family, key) in enumerate(sorted(per)):
        if n % YIELD_EVERY == YIELD_EVERY - 1:
            await asyncio.sleep(0)  # the screen's keys and an opened pane are not held up
        slot = per.pop((family, key))  # its points are freed as its row is made
        names = slot["names"]
        series = {quantity: list(zip(ts, vs)) for quantity, (ts, vs) in slot["series"].items()}
        if names.kind == "counters":
            if "drafts" not in series:
                continue  # only a load gauge of a server without spec decoding
            inst = counters_instance(family, key, slot["labels"], series, slot.get("step", step))
        else:
            if "accept_len" not in series:
                continue
            inst = gauge_instance(family, key, slot["labels"], series)
            inst.step = slot.get("step", step)
        inst.nonfinite = slot["nonfinite"]
        inst.pack()
        fleet.instances.append(inst)
    _mark_down(fleet, up.series, end, step)
    for inst in fleet.instances:
        if inst.kind != "down":
            flag(inst, end, step)
    by_group: dict[str, list[Instance]] = {}
    for inst in fleet.instances:
        if inst.kind != "down":
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


async def all_slots(
    fleet: Fleet, jobs: list, calls: list, group_by: list[str], others: list | None = None
) -> tuple[dict[tuple[str, tuple], dict], list[Result]]:
    """The answers of ``calls`` (one per job, run at once) by instance: (family, key) -> its
    labels, its points per quantity (two arrays of doubles: times and values) and its NaN
    samples; and the answers of ``others`` as they are. Each answer is made compact as soon as
    it has come and its decoded JSON is let go: 10,000 instances' answers held whole until the
    last had come cost a gigabyte (a point as a list of a float and a string is ~150 bytes; as
    two doubles, 16). The first failure is raised once every call has ended, as
    :func:`~tui.core.sources.prom.api.all_of` does."""
    per: dict[tuple[str, tuple], dict] = {}

    async def one(names: FleetNames, qq: q.Query, call) -> None:
        ans = await call
        _add_slots(per, fleet, names, qq, ans, group_by)

    got = await asyncio.gather(
        *(one(names, qq, call) for (names, qq), call in zip(jobs, calls)),
        *(others or []),
        return_exceptions=True,
    )
    for r in got:
        if isinstance(r, BaseException):
            raise r
    return per, [r for r in got[len(jobs) :] if isinstance(r, Result)]


def _add_slots(
    per: dict[tuple[str, tuple], dict],
    fleet: Fleet,
    names: FleetNames,
    qq: q.Query,
    ans: Result,
    group_by: list[str],
) -> None:
    fleet.warnings += [w for w in ans.warnings if w not in fleet.warnings]
    by = q.by_labels(names, group_by)
    for s in ans.series:
        labels = {k: str(v) for k, v in (s.get("metric") or {}).items() if k in by and v != ""}
        key = tuple(labels.get(k, "") for k in (*q.BASE_LABELS, *names.instance_labels))
        slot = per.setdefault(
            (names.family, key), {"names": names, "labels": {}, "series": {}, "nonfinite": 0}
        )
        slot["labels"].update(labels)
        values = s.get("values") or []
        if qq.quantity in ("accepted", "drafts", "accept_len"):
            slot["nonfinite"] += nonfinite(values)
        slot["series"][qq.quantity] = point_arrays(values)


def _young(
    per: dict[tuple[str, tuple], dict], step: float, interval: float | None
) -> list[tuple[str, tuple]]:
    """Instances with fewer than 3 steps of their main series while the scrape interval is
    finer than the step: their history is younger than a few steps."""
    if not interval or interval * 1.5 >= step:
        return []
    out = []
    for k, slot in per.items():
        main = "drafts" if slot["names"].kind == "counters" else "accept_len"
        if len(slot["series"].get(main, ((), ()))[0]) < 3:
            out.append(k)
    return out


def _mark_down(fleet: Fleet, series: list[dict], end: float, step: float) -> None:
    """Targets whose ``up`` is 0 at the window's end: the instances they scrape flagged down
    (with how long), and a row of their own for a target that has no spec-decode series in the
    window (down from the start: it never sent any)."""
    rows: dict[tuple[str, str], list[Instance]] = {}
    for inst in fleet.instances:
        rows.setdefault((inst.labels.get("instance", ""), inst.labels.get("job", "")), []).append(inst)
    for s in series:
        labels = {k: str(v) for k, v in (s.get("metric") or {}).items() if k in ("instance", "job")}
        pts = points(s.get("values") or [])
        if not pts or pts[-1][1] != 0.0 or end - pts[-1][0] > 2.5 * step:
            continue  # up now, or a target no longer scraped
        last_up = max((t for t, v in pts if v == 1.0), default=None)
        since = next((t for t, v in pts if last_up is None or t > last_up), pts[0][0])
        down_for = end - since + (0.0 if last_up is not None else 0.0)
        k = (labels.get("instance", ""), labels.get("job", ""))
        if k in rows:
            for inst in rows[k]:
                inst.down_for = down_for
            continue
        inst = Instance("—", "down", labels, k, step=step, down_for=down_for)
        inst.flags.append(
            f"down for {'the whole window, ' if last_up is None else ''}{_age(down_for)} (up = 0): no series"
        )
        fleet.instances.append(inst)


async def compare_groups(api: PromAPI, fq: FleetQuery, fleet: Fleet) -> dict:
    """B − A between the instances matching each of two selectors (run as their own queries, so
    a selector may use any label Prometheus has, not only the grouping ones), over the fleet's
    window (the same end and step). The verdict answers for *these* servers over this window,
    on pooled counts with ``summary``'s estimator (:func:`tui.core.fleet.canary.these_servers`);
    ``population`` is the verdict for servers drawn like these (instances as the unit)."""
    assert fq.compare is not None
    sides = []
    members: list[list[Instance]] = []
    for sel in fq.compare:
        sub = FleetQuery(
            fq.window,
            fleet.step,
            q.join(q.matchers(fq.selector), q.matchers(sel)),
            fq.group_by,
            end=fleet.end,
        )
        part = await refresh(api, sub)
        fleet.queries += part.queries
        fleet.warnings += [w for w in part.warnings if w not in fleet.warnings]
        live = [i for i in part.instances if i.kind != "down"]
        sides.append(group_estimate(sel, live))
        members.append(live)
    out = these_servers(members[0], members[1])
    out["a"]["selector"], out["b"]["selector"] = fq.compare
    out["window"] = {"end": fleet.end, "span_s": fleet.span, "window_s": fleet.window, "step_s": fleet.step}
    pop = welch(sides[0], sides[1])
    pop["question"] = POPULATION
    pop["a"]["selector"], pop["b"]["selector"] = fq.compare
    out["population"] = pop
    out["load_adjusted"] = load_adjusted(members[0], members[1])
    return out
