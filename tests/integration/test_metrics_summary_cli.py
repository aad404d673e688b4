"""``specwatch summary`` of a metrics source (the CLI as a subprocess against a fake vLLM /metrics)."""

from __future__ import annotations

import json

from _cli_util import run_cli
from _prom_util import busy_vllm
from _ssh_util import free_port


def cli(*args):
    return run_cli("summary", *args)


def test_summary_cli_on_a_metrics_source():
    _, server = busy_vllm()
    try:
        r = cli("--json", "--duration", "0.2", "--scrape-interval", "0.1", f"gpu=metrics+{server.url}")
        assert r.returncode == 0, r.stderr
        src = json.loads(r.stdout)["sources"][0]
        assert src["label"] == "gpu" and src["records"] == 2 and src["family"] == "vllm"
        assert src["metrics"]["lifetime"]["engine 0"]["drafts"] == 30
        r = cli("--duration", "0", f"metrics+{server.url}")  # one scrape: the lifetime totals only
        assert r.returncode == 0, r.stderr
        assert "engine 0 since start: accept len 1.80" in r.stdout and "records 0" in r.stdout
    finally:
        server.stop()
    r = cli("--duration", "0", f"metrics+http://127.0.0.1:{free_port()}/metrics")
    assert r.returncode == 2 and "connection refused" in r.stderr
