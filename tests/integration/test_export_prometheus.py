"""End to end: Debian's Prometheus on 127.0.0.1 scrapes ``specwatch export`` and its HTTP API returns
the core's numbers. With CI=true a missing prometheus binary fails the test (it must run)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
from urllib.parse import quote

import pytest
from _export_util import SAMPLES, Running
from _ssh_util import free_port

from tui.core.pipeline.whole import summarize_file
from tui.core.sources.prom.http import HttpError, http_get


def prometheus_binary() -> str:
    path = shutil.which("prometheus") or (
        "/usr/bin/prometheus" if os.access("/usr/bin/prometheus", os.X_OK) else None
    )
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(
                "CI=true but prometheus is not installed (Debian package prometheus): the end-to-end "
                "exporter test must run"
            )
        pytest.skip("prometheus is not installed (apt-get install prometheus)")
    return path


async def query(port: int, promql: str) -> list[dict]:
    resp = await http_get("127.0.0.1", port, "/api/v1/query?query=" + quote(promql), timeout=5)
    data = json.loads(resp.text())
    assert data["status"] == "success", data
    return data["data"]["result"]


async def test_prometheus_scrapes_the_exporter(tmp_path):
    binary = prometheus_binary()
    names = ["vllm_v1_eagle3.log", "ab_a.log"]
    ref = {n: summarize_file(str(SAMPLES / n), n, workers=1).stats for n in names}
    async with Running([str(SAMPLES / n) for n in names]) as run:
        await run.wait_records([ref[n].records for n in names])
        exporter = run.exp.url.split("//", 1)[1].split("/", 1)[0]
        (tmp_path / "prometheus.yml").write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: specwatch\n    scrape_interval: 1s\n    scrape_timeout: 1s\n"
            f"    static_configs:\n      - targets: ['{exporter}']\n"
        )
        port = free_port()
        log = open(tmp_path / "prometheus.log", "w")
        proc = subprocess.Popen(
            [
                binary,
                f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
        )
        try:
            end = time.monotonic() + 30
            while True:
                assert proc.poll() is None, (tmp_path / "prometheus.log").read_text()[-2000:]
                try:
                    got = await query(port, 'specwatch_accept_len_mean{rank="all"}')
                    if len(got) == 2:
                        break
                except (HttpError, json.JSONDecodeError, KeyError):
                    pass
                assert time.monotonic() < end, (tmp_path / "prometheus.log").read_text()[-2000:]
                await asyncio.sleep(0.2)
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
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
