"""``specwatch summary`` of a metrics source: scrape for a while, then report.

A metrics source has no file to read whole: the summary scrapes it ``duration / interval + 1``
times (default: every 5 s for 10 s, i.e. a baseline and two windows) and reports the statistics
of the records those windows made, exactly as ``stream`` / ``watch`` compute them, plus, for vLLM
V1, the server's lifetime totals at the last scrape (accept len = 1 + accepted / drafts,
accept rate = accepted / draft tokens, per position, since the server started). ``duration`` 0
scrapes once: the lifetime totals only.
"""

from __future__ import annotations

import asyncio
import math
from contextlib import aclosing
from typing import Any

from tui.core.pipeline.follow import Followed, follow
from tui.core.sources.base import SourceEvent
from tui.core.sources.prom.scraper import open_metrics
from tui.core.sources.target import SourceSpec

DEFAULT_DURATION = 10.0


class MetricsSummary:
    def __init__(self, spec: SourceSpec, label: str | None = None) -> None:
        self.spec = spec
        self.followed = Followed(spec.name, label or spec.name)
        self.stats = self.followed.stats
        self.source: Any = None
        self.events: list[str] = []

    def result(self) -> dict:
        d = self.stats.to_dict()
        d["lines"] = self.followed.lines
        d["bytes"] = 0
        d["family"] = self.followed.parser.family
        src = self.source
        d["metrics"] = {
            "url": src.target.url if src is not None else self.spec.target,
            "where": src.where if src is not None else self.spec.target,
            "scrapes": src.scrapes if src is not None else 0,
            "interval": src.interval if src is not None else None,
            "lifetime": src.lifetime if src is not None else {},
            "error": self.followed.error,
            "events": self.events[-20:],
        }
        d["files"] = None  # not files
        d["window"] = None  # --since/--until are for logs
        return d


async def _run(ms: MetricsSummary, duration: float, options: dict[str, Any]) -> None:
    opts = {k: v for k, v in options.items() if k not in ("idle_after", "max_scrapes")}
    interval = float(opts.get("scrape_interval") or 5.0)
    scrapes = 1 + max(0, int(math.floor(duration / interval + 1e-9)))
    ms.source = source = open_metrics(ms.spec, follow=False, idle_after=None, max_scrapes=scrapes, **opts)
    deadline = duration + interval + source.timeout + 2.0  # a server that dies mid-way ends it too
    try:
        async with asyncio.timeout(deadline):
            async with aclosing(follow([source], [ms.followed])) as batches:
                async for _, batch, _ in batches:
                    if isinstance(batch, SourceEvent) and batch.message:
                        ms.events.append(f"{batch.kind.value}: {batch.message}")
    except TimeoutError:
        ms.events.append(f"stopped after {deadline:.0f} s")


def summarize_metrics(
    spec: SourceSpec,
    label: str | None = None,
    *,
    duration: float = DEFAULT_DURATION,
    options: dict[str, Any] | None = None,
) -> MetricsSummary:
    """Scrape ``spec`` over ``duration`` seconds and return its statistics (``.stats``,
    ``.result()``); ``.followed.error`` says why, when the endpoint could not be read."""
    ms = MetricsSummary(spec, label)
    asyncio.run(_run(ms, duration, options or {}))
    return ms
