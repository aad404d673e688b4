"""End to end: Debian's Prometheus on 127.0.0.1 scrapes ``specwatch export`` and its HTTP API returns
the core's numbers. With CI=true a missing prometheus binary fails the test (it must run)."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from _export_util import SAMPLES, Running
from _prometheus_util import running_prometheus
from _wait import wait_until_awaited

from tui.core.pipeline.whole import summarize_file
from tui.core.sources.prom.http import HttpError, http_get


async def query(port: int, promql: str) -> list[dict]:
    resp = await http_get("127.0.0.1", port, "/api/v1/query?query=" + quote(promql), timeout=5)
    data = json.loads(resp.text())
    assert data["status"] == "success", data
    return data["data"]["result"]


async def test_prometheus_scrapes_the_exporter(tmp_path):
    names = ["vllm_v1_eagle3.log", "ab_a.log"]
    ref = {n: summarize_file(str(SAMPLES / n), n, workers=1).stats for n in names}
    async with Running([str(SAMPLES / n) for n in names]) as run:
        await run.wait_records([ref[n].records for n in names])
        exporter = run.exp.url.split("//", 1)[1].split("/", 1)[0]
        with running_prometheus(tmp_path, [("specwatch", exporter, {}, "/metrics")]) as prom:
            port = prom.port

            async def two_sources() -> list[dict] | None:
                try:
                    got = await query(port, 'specwatch_accept_len_mean{rank="all"}')
                except (HttpError, json.JSONDecodeError, KeyError):
                    return None
                return got if len(got) == 2 else None

            got = await wait_until_awaited(
                two_sources, what="both sources in Prometheus", show=prom.tail, step=0.2
            )
            up = await query(port, 'up{job="specwatch"}')
            assert [r["value"][1] for r in up] == ["1"]
            by_source = {r["metric"]["source"]: r for r in got}
            for n in names:
                seg = ref[n].current
                r = by_source[n]
                assert r["metric"]["job"] == "specwatch" and r["metric"]["config"] == seg.config.label()
                assert float(r["value"][1]) == pytest.approx(seg.all.accept_len.mean, rel=1e-12)
            tokens = await query(
                port,
                'specwatch_accepted_tokens_total{rank="all"} / specwatch_drafted_tokens_total{rank="all"}',
            )
            v = ref["vllm_v1_eagle3.log"].current.all
            assert [r["metric"]["source"] for r in tokens] == ["vllm_v1_eagle3.log"]
            assert float(tokens[0]["value"][1]) == pytest.approx(v.accepted / v.drafted, rel=1e-12)
