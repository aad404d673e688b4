"""An :class:`Exporter` running in the test's event loop, its scrape parsed back with
prometheus-client's parser, and the series it serves for the sample logs (shared by the exporter
tests)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from _wait import wait_until_async
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tui.cli.export import Exporter
from tui.core.export.metrics import Exported, SpecwatchCollector
from tui.core.pipeline.follow import Followed
from tui.core.sources.base import EventKind, LineBatch, SourceEvent
from tui.core.sources.lines import START
from tui.core.sources.prom.http import http_get
from tui.core.sources.spec import expand_source_args

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"


def scraped_when_read(proc, source: str, records: int) -> dict:
    """The /metrics of the ``specwatch export`` process ``proc`` (its first stderr line names its
    address), once it has exported ``records`` records of ``source``."""
    import re
    import urllib.request

    from _wait import wait_until

    line = proc.stderr.readline()
    m = re.search(r"serving (http://\S+)", line)
    assert m, line

    def scraped() -> dict | None:
        got = samples_by_name(urllib.request.urlopen(m.group(1), timeout=5).read().decode())
        name = "specwatch_source_records_total"
        if find(got, name, source=source) and one(got, name, source=source) == records:
            return got
        return None

    return wait_until(scraped, what=f"{records} records of {source} exported")


def samples_by_name(text: str) -> dict[tuple[str, frozenset], float]:
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def find(samples: dict, name: str, **labels) -> list[tuple[dict, float]]:
    want = set(labels.items())
    return [(dict(lab), v) for (n, lab), v in samples.items() if n == name and want <= set(lab)]


def one(samples: dict, name: str, **labels) -> float:
    got = find(samples, name, **labels)
    assert len(got) == 1, (name, labels, got)
    return got[0][1]


class Running:
    """An Exporter running in this loop (HTTP on a free port of 127.0.0.1)."""

    def __init__(self, texts: list[str], **kw) -> None:
        specs = expand_source_args(texts)
        opts = {"idle_after": None, **kw.pop("options", {})}
        self.exp = Exporter(
            specs, addr="127.0.0.1", port=0, start=START, options=opts, local_host="box1", quiet=True, **kw
        )
        self.task: asyncio.Task | None = None

    async def __aenter__(self) -> Running:
        self.task = asyncio.create_task(self.exp.run())
        await wait_until_async(lambda: self.exp.url or self.task.done(), what="the exporter's address")
        if self.task.done():
            self.task.result()  # the exporter failed to start: its error
        return self

    async def __aexit__(self, *exc) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)

    async def scrape(self) -> dict:
        port = int(self.exp.url.rsplit(":", 1)[1].split("/")[0])
        resp = await http_get("127.0.0.1", port, "/metrics", timeout=5)
        return samples_by_name(resp.text())

    async def wait_records(self, n: list[int]) -> None:
        def records() -> list[int]:
            return [ex.state.stats.records for ex in self.exp.sources]

        await wait_until_async(lambda: records() == n, what=f"records {n}", show=records)


def served() -> dict[str, set[str]]:
    """Series name -> label names, as the exporter serves them for the sample logs."""
    exported = []
    for name in ("vllm_v1_eagle3.log", "sglang_dp_attention.log"):
        st = Followed(name, track_arrivals=True)
        st.feed(SourceEvent(name, EventKind.OPENED, "opened"))
        lines = (ROOT / "sample_logs" / name).read_text().splitlines()
        st.feed(LineBatch(name, lines, list(range(len(lines))), 1))
        exported.append(Exported(st, "box1", "file", name))
    reg = CollectorRegistry()
    reg.register(SpecwatchCollector(exported))
    out: dict[str, set[str]] = {}
    for fam in text_string_to_metric_families(generate_latest(reg).decode()):
        for s in fam.samples:
            out.setdefault(s.name, set()).update(s.labels)
    out["specwatch_exporter_info"] = {"version"}  # served by the CLI's registry (see test_export)
    return out
