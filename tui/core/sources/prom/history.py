"""One serving instance's acceptance read from a Prometheus, as a source: its history over a
window first (one record per step), then, when following, the new steps as Prometheus scrapes them.
The fleet view opens it for the row a user picks, so the usual pane shows that instance.

Batches are ``metrics`` batches (one JSON record per line, as the ``/metrics`` scraper sends): a
counter family's record per step holds the step's exact counts (accept len = 1 + accepted / drafts,
the differences of the counters' raw values, see :mod:`tui.core.sources.prom.steps`); a counter
reset is a ``counter_reset`` marker, so a restart opens a segment as in a log; a step without
drafts is no record (idle). A gauge family's record is the gauge's value at the step.

Events: ``connected`` after the first answer, ``error`` (not fatal while following: tried again at
the next step, with ``reconnecting``), ``eof`` when not following.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from tui.core.formats.fleet_names import FleetNames
from tui.core.model.records import RATE_DRAFTS
from tui.core.sources.base import Batch, EventKind, GeneratorSource, LineBatch, SourceEvent
from tui.core.sources.clock import naive_now
from tui.core.sources.prom.api import PromAPI, PromAuth, PromError, all_of
from tui.core.sources.prom.steps import points, restart_steps, step_records


def exact(labels: dict[str, str]) -> str:
    """Label matchers selecting exactly these label values."""
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(labels.items()))


class PromHistorySource(GeneratorSource):
    def __init__(
        self,
        name: str,
        url: str,
        names: FleetNames,
        labels: dict[str, str],
        *,
        window: float = 1800.0,
        step: float = 30.0,
        follow: bool = True,
        end: float | None = None,
        auth: PromAuth | None = None,
        timeout: float = 10.0,
        transport: Any = None,
    ) -> None:
        self.name = name
        self.transport = transport  # an httpx transport (tests); None: the network
        self.url, self.names, self.labels = url, names, dict(labels)
        # ``end``: the window ends there (a past window, ``fleet --end``): read once, not followed
        self.window, self.step, self.follow, self.end = window, step, follow and end is None, end
        self.auth, self.timeout = auth, timeout
        self.where = f"{names.family} {exact(labels)} from {url}"
        self.error: str | None = None
        self._line = 0
        self._last: dict[str, tuple[float, float]] = {}  # quantity -> its last (t, value) read
        self._started = False
        self._gauge_t: float | None = None  # the newest gauge step sent

    def _event(self, kind: EventKind, message: str, **data: Any) -> SourceEvent:
        return SourceEvent(self.name, kind, message, self.url, time.time(), data)

    def _batch(self, lines: list[str]) -> LineBatch:
        batch = LineBatch(
            self.name,
            lines,
            list(range(self._line, self._line + len(lines))),
            self._line + 1,
            self.url,
            "metrics",
        )
        self._line += len(lines)
        return batch

    def _queries(self) -> dict[str, str]:
        sel = exact(self.labels)
        return {q: f"{agg}({s.selector(sel)})" for q, s, agg in self.names.series()}

    async def _run(self) -> AsyncIterator[Batch]:
        api = PromAPI(self.url, self.auth, timeout=self.timeout, transport=self.transport)
        try:
            end = self.end if self.end is not None else await api.server_time()
            start = end - self.window
            connected = False
            while True:
                try:
                    lines = await self._read(api, start, end)
                except PromError as exc:
                    self.error = str(exc)
                    if not self.follow or not connected:
                        yield self._event(EventKind.ERROR, str(exc), fatal=True)
                        return
                    yield self._event(EventKind.ERROR, str(exc), fatal=False)
                    yield self._event(EventKind.RECONNECTING, f"asking again in {self.step:g} s")
                else:
                    if not connected:
                        connected = True
                        yield self._event(EventKind.CONNECTED, f"reading {self.where}")
                    if lines:
                        yield self._batch(lines)
                    start = max(t for t, _ in self._last.values()) if self._last else start
                if not self.follow:
                    yield self._event(EventKind.EOF, "history read")
                    return
                await asyncio.sleep(self.step)
                end = await api.server_time()
        finally:
            await api.aclose()

    async def _read(self, api: PromAPI, start: float, end: float) -> list[str]:
        """The records of the steps after ``start`` up to ``end`` (the step before ``start`` is
        asked for too, as the base of the first difference)."""
        queries = self._queries()
        answers = await all_of(
            api.query_range(q, start - self.step, end, self.step) for q in queries.values()
        )
        series: dict[str, list[tuple[float, float]]] = {}
        for q, ans in zip(queries, answers):
            got = ans.series
            pts = points(got[0].get("values") or []) if got else []
            last = self._last.get(q)
            if last is not None:  # continue from the last value read: no step twice
                pts = [last, *[p for p in pts if p[0] > last[0]]]
            series[q] = pts
            if pts:
                self._last[q] = pts[-1]
        return self._records(series)

    def _records(self, series: dict[str, list[tuple[float, float]]]) -> list[str]:
        fam = self.names.family
        out: list[str] = []
        if not self._started:
            self._started = True
            first = min((naive_now(pts[0][0]) for pts in series.values() if pts), default=None)
            out.append(
                json.dumps({"marker": "metrics_start", "family": fam, "timestamp": first, "config": {}})
            )
        rank = (
            " ".join(f"{k}={self.labels[k]}" for k in self.names.instance_labels if k in self.labels) or None
        )
        if self.names.kind == "gauge":
            for t, v in series.get("accept_len", []):
                if v >= 1.0 and (self._gauge_t is None or t > self._gauge_t):  # below 1: before any decode
                    point = {
                        "family": fam,
                        "timestamp": naive_now(t),
                        "rank": rank,
                        "accept_len": v,
                        "extra": {"source": "prometheus"},
                    }
                    out.append(json.dumps(point))
                self._gauge_t = t if self._gauge_t is None else max(self._gauge_t, t)
            return out
        restarts = restart_steps(series.get("created", []))
        # accepted and drafts paired over the same two samples (a NaN or missing sample of
        # either leaves its step out of both): the steps the fleet's row reads (steps.step_records)
        steps, drops = step_records(series, restarts)
        for r in steps:
            if r.t in drops:
                out.append(
                    json.dumps({"marker": "counter_reset", "family": fam, "timestamp": r.t, "config": {}})
                )
            if r.drafts <= 0:
                continue  # idle: no record
            rec: dict[str, Any] = {
                "family": fam,
                "timestamp": naive_now(r.t),
                "rank": rank,
                "accept_len": r.accept_len,
                "accepted": int(round(r.accepted)),
                "num_drafts": float(round(r.drafts)),
                "rate_definition": RATE_DRAFTS,
                "extra": {"source": "prometheus", "window_s": f"{r.span:.3f}"},
            }
            if r.drafted:
                rec["accept_rate"] = r.accepted / r.drafted
                rec["drafted"] = int(round(r.drafted))
            if r.throughput is not None:
                rec["throughput"] = r.throughput
            if r.running is not None:
                rec["running_req"] = int(r.running)
            out.append(json.dumps(rec))
        return out
