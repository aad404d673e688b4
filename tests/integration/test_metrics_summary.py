"""``specwatch summary metrics+http://...``: scrape for --duration seconds, report the windows'
statistics and vLLM's lifetime totals; an endpoint nobody answers is an error (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_util import run_cli
from _prom_util import FakeVllm, PromServer
from _ssh_util import free_port

from tui.core.pipeline.whole_metrics import summarize_metrics
from tui.core.sources.spec import parse_source_spec

ROOT = Path(__file__).parent.resolve().parents[1]


def busy_vllm() -> tuple[FakeVllm, PromServer]:
    """Every scrape sees 10 more drafts on engine 0 (4 + 3 + 1 accepted: accept len 1.8)."""
    fake = FakeVllm(engines=1, k=3)

    def body() -> str:
        fake.step(0, 10, [4, 3, 1])
        return fake.text()

    return fake, PromServer(body).start()


def test_summarize_metrics_windows_and_lifetime():
    fake, server = busy_vllm()
    try:
        ms = summarize_metrics(
            parse_source_spec(f"v=metrics+{server.url}"), duration=0.3, options={"scrape_interval": 0.1}
        )
    finally:
        server.stop()
    d = ms.result()
    assert d["metrics"]["scrapes"] == 4 and d["records"] == 3  # a baseline and three windows
    assert d["accept_len"]["mean"] == pytest.approx(1.8) and d["accept_len"]["n"] == 3
    life = d["metrics"]["lifetime"]["engine 0"]
    assert (life["drafts"], life["accepted"], life["draft_tokens"]) == (40, 32, 120)
    assert life["accept_len"] == pytest.approx(1.8) and life["per_position"] == pytest.approx([0.4, 0.3, 0.1])
    seg = d["segments"][-1]
    assert seg["accept_rate_normalized"]["mean"] == pytest.approx(0.8 / 3)
    assert seg["config"]["model_path"] == fake.model


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
