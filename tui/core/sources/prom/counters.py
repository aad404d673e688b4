"""What the families' ``/metrics`` readers share (no I/O, no family): the scrape they write into
(:class:`Scrape`), label keys, cumulative counters and their differences between two scrapes,
gauges that hold the latest interval (:func:`fingerprinted`). The readers themselves are the
families' (``tui/core/formats/<family>/metrics.py``, ``Format.metrics``); the converter that runs
them is :class:`tui.core.sources.prom.exposition.Converter`. Formulas: docs/formats-metrics.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tui.core.model.records import RATE_DRAFTS

_POS_LABELS = ("position", "token_position", "instance", "job")
IGNORED_LABELS = ("position", "instance", "job")


@dataclass(slots=True)
class ScrapeResult:
    lines: list[str] = field(default_factory=list)  # JSON records and markers, in order
    found: list[str] = field(default_factory=list)  # what was recognised, e.g. "vLLM V1 (2 engines)"
    lifetime: dict[str, dict] = field(default_factory=dict)  # totals since start, per rank
    note: str = ""  # why nothing could be used (no spec-decode metric, ...)
    resets: int = 0


@dataclass(slots=True)
class Scrape:
    """One scrape as the families' readers see it: its time, the seconds since the previous one
    (``dt``, monotonic), whether a restart was seen, and where records and markers go."""

    ts: float
    dt: float | None
    restarted: bool
    first: bool
    res: ScrapeResult
    started: set[str]  # families whose start marker was sent (kept by the converter)

    def record(self, rec: dict) -> None:
        self.res.lines.append(json.dumps(rec))

    def marker(self, kind: str, family: str, config: dict) -> None:
        self.res.lines.append(
            json.dumps({"marker": kind, "family": family, "timestamp": self.ts, "config": config})
        )

    def start_or_reset(self, family: str, restarted: bool, config: dict) -> None:
        if family not in self.started:
            self.started.add(family)
            self.marker("metrics_start", family, config)
        elif restarted:
            self.res.resets += 1
            self.marker("counter_reset", family, config)


def key(labels: dict) -> tuple:
    """A series' labels without the per-position and target labels."""
    return tuple(sorted((k, v) for k, v in labels.items() if k not in IGNORED_LABELS))


def finite(v: float | None) -> bool:
    return v is not None and math.isfinite(v)


def prefix(labels: dict) -> str:
    inst = labels.get("instance")
    return f"{inst} " if inst else ""


def count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


@dataclass(slots=True)
class Counters:
    """One server's (or one label set's) counters at one scrape."""

    family: str
    labels: dict
    values: dict[str, float] = field(default_factory=dict)  # drafts, draft_tokens, accepted, gen_tokens
    acc_pos: dict[int, float] = field(default_factory=dict)
    drafted_pos: dict[int, float] = field(default_factory=dict)
    running: float | None = None

    def went_back(self, prev: Counters) -> bool:
        if any(self.values.get(n, math.inf) < v for n, v in prev.values.items()):
            return True
        for cur, old in ((self.acc_pos, prev.acc_pos), (self.drafted_pos, prev.drafted_pos)):
            if any(cur.get(i, -1.0) < v for i, v in old.items()):
                return True  # a per-position series never disappears, except at a restart
        return False


def group_key(labels: dict) -> tuple:
    return tuple(sorted((k, v) for k, v in labels.items() if k not in _POS_LABELS))


def counter_name(name: str) -> str:
    """prometheus-client names counter samples ``*_total``; text without a TYPE line may not."""
    return name if name.endswith(("_total", "_created", "_info")) else name + "_total"


def pos(labels: dict, name: str) -> int | None:
    try:
        return int(labels.get(name, ""))
    except ValueError:
        return None


def group(groups: dict[tuple, Counters], family: str, labels: dict) -> Counters:
    """The counters of ``labels``' group, made on first use."""
    k = group_key(labels)
    c = groups.get(k)
    if c is None:
        c = groups[k] = Counters(family, {n: v for n, v in labels.items() if n not in _POS_LABELS[:2]})
    return c


def delta(cur: dict, base: dict | None, name) -> float | None:
    v = cur.get(name)
    if v is None:
        return None
    if base is None:
        return v
    old = base.get(name)
    # a series that appears between two scrapes was created at 0 (collector.py and llama.cpp
    # create per-position series on their first increment)
    return v - (old if old is not None else 0.0)


def fingerprinted(
    groups: dict[tuple, dict],
    scrape: Scrape,
    seen: dict[tuple, tuple],
    order: Callable[[dict], Any],
    fingerprint: Callable[[dict], tuple],
    make: Callable[[dict, float], dict | None],
) -> None:
    """Gauges that hold the latest interval: a group makes a record when its ``fingerprint``
    differs from the previous scrape's (``seen``); the first scrape only sets the baseline."""
    for k, g in sorted(groups.items(), key=lambda kv: order(kv[1]["labels"])):
        fp = fingerprint(g)
        old = seen.get(k)
        seen[k] = fp
        if scrape.first or fp == old:
            continue  # the baseline, or the same interval seen again
        rec = make(g, scrape.ts)
        if rec is not None:
            scrape.record(rec)


# What a family's counters say about one window: (verify steps, steps of the per-position
# counters, accepted tokens, drafted tokens); None: no verify step in it (idle).
Steps = tuple["float | None", "float | None", "float | None", "float | None"]


class CounterReader:
    """A family whose spec-decode counters are cumulative: a record is the difference between
    two scrapes, with the pooled-estimator counts of the window (``accepted``, ``drafted``,
    ``num_drafts``). Subclasses say how the counters are named (:meth:`collect`), how a window's
    verify steps are counted (:meth:`steps`) and what the run's config is (:meth:`config`)."""

    found_text = ""  # e.g. "llama.cpp spec-decode counters"
    prefix = ""  # the family's metric names start with this
    names: dict[str, str] = {}  # counter name -> Counters.values key
    running_name = ""  # the gauge of running requests

    def __init__(self, family: str) -> None:
        self.family = family
        self._prev: dict[tuple, Counters] = {}

    def collect(self, samples: list[tuple[str, dict, float, str]]) -> dict[tuple, Counters]:
        """The groups of this scrape's counters that can make a record (:meth:`usable`)."""
        groups: dict[tuple, Counters] = {}
        running: dict[tuple, float] = {}
        for name, labels, value, _ in samples:
            if not name.startswith(self.prefix):
                continue
            cname = counter_name(name)
            if cname in self.names:
                group(groups, self.family, labels).values[self.names[cname]] = value
            elif name == self.running_name:
                running[group_key(labels)] = value
            else:
                self.other(groups, name, cname, labels, value)
        for k, c in groups.items():
            c.running = running.get(k)
        return {k: c for k, c in groups.items() if self.usable(c)}

    def other(self, groups: dict[tuple, Counters], name: str, cname: str, labels: dict, value: float) -> None:
        """A sample of the family that is not one of :attr:`names` (per-position series, info)."""

    def usable(self, c: Counters) -> bool:
        return "accepted" in c.values

    def config(self, groups: dict[tuple, Counters], scrape: Scrape) -> tuple[dict, int | None, bool]:
        """(the segment config, k when known, True when the config says the server restarted)."""
        return {}, None, False

    def steps(
        self, key: tuple, c: Counters, base: Counters | None, k: int | None, extra: dict
    ) -> Steps | None:
        raise NotImplementedError

    def lifetime_drafts(self, c: Counters, k: int | None) -> tuple[float | None, float | None, float | None]:
        """(drafts, accepted, draft tokens) since the server started."""
        return c.values.get("drafts"), c.values.get("accepted"), c.values.get("draft_tokens")

    def feed(self, samples: list[tuple[str, dict, float, str]], scrape: Scrape) -> None:
        groups = self.collect(samples)
        if not groups:
            return
        scrape.res.found.append(self.found_text)
        config, k, changed = self.config(groups, scrape)
        restarted = scrape.restarted or changed
        prev_groups = self._prev
        went_back = {g for g, c in groups.items() if g in prev_groups and c.went_back(prev_groups[g])}
        scrape.start_or_reset(self.family, restarted or bool(went_back), config)
        for g, c in sorted(groups.items(), key=lambda kv: kv[1].labels.get("instance") or ""):
            life = self.lifetime(c, k)
            if life["drafts"] is not None:  # unknown without k or per-position counters: not "no draft"
                scrape.res.lifetime[c.labels.get("instance") or "all"] = life
            prev = prev_groups.get(g)
            if prev is None and not restarted:
                continue  # the baseline
            base = None if (prev is None or restarted or g in went_back) else prev
            rec = self.window(g, c, base, scrape.dt, scrape.ts, k)
            if rec is not None:
                scrape.record(rec)
        self._prev = groups

    def window(
        self, g: tuple, c: Counters, base: Counters | None, dt: float | None, ts: float, k: int | None
    ) -> dict | None:
        """The record of one window (``base`` None: the counters count from zero, after a restart)."""
        bv = base.values if base is not None else None
        ba = base.acc_pos if base is not None else None
        extra: dict[str, str] = {"source": "metrics"}
        # a position drafted but never accepted has no accepted series; its rate is 0
        pos_acc = {i: delta(c.acc_pos, ba, i) or 0.0 for i in set(c.acc_pos) | set(c.drafted_pos)}
        got = self.steps(g, c, base, k, extra)
        if got is None:
            return None
        steps, pos_steps, accepted, drafted = got
        if accepted is None:
            return None
        rec: dict = {"family": c.family, "timestamp": ts, "rank": c.labels.get("instance") or None}
        if steps:
            rec["accept_len"] = 1.0 + accepted / steps
            rec["num_drafts"] = float(round(steps))
        rec["accepted"] = int(round(accepted))
        if drafted is not None and drafted > 0:
            rec["accept_rate"] = accepted / drafted
            rec["drafted"] = int(round(drafted))
            if steps:
                extra["drafts_per_step"] = f"{drafted / steps:.4g}"
        rec["rate_definition"] = RATE_DRAFTS
        if pos_acc and pos_steps and pos_steps > 0:
            rec["per_position"] = [pos_acc[i] / pos_steps for i in sorted(pos_acc)]
        d_gen = delta(c.values, bv, "gen_tokens")
        if d_gen is not None and base is not None and dt and dt > 0:
            rec["throughput"] = d_gen / dt
        if c.running is not None and math.isfinite(c.running):
            rec["running_req"] = int(c.running)
        if dt and base is not None:
            extra["window_s"] = f"{dt:.3f}"
        if base is None:
            extra["window"] = "since restart"
        rec["extra"] = extra
        return rec

    def lifetime(self, c: Counters, k: int | None) -> dict:
        """Totals since the server started, as the vLLM lifetime entry (docs/formats-metrics.md)."""
        drafts, acc, dtok = self.lifetime_drafts(c, k)
        p = c.acc_pos
        return {
            "drafts": None if drafts is None else int(round(drafts)),
            "draft_tokens": None if dtok is None else int(round(dtok)),
            "accepted": None if acc is None else int(round(acc)),
            "accept_len": 1.0 + acc / drafts if (drafts and acc is not None) else None,
            "accept_rate": acc / dtok if (dtok and acc is not None) else None,
            "per_position": [p[i] / drafts for i in sorted(p)] if drafts and p else None,
            "since": None,
        }
