"""``specwatch summary metrics+http://...``: scrape for --duration seconds, report the windows'
statistics and vLLM's lifetime totals; an endpoint nobody answers is an error (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _prom_util import busy_vllm

from tui.core.pipeline.whole_metrics import summarize_metrics
from tui.core.sources.spec import parse_source_spec

ROOT = Path(__file__).parent.resolve().parents[1]


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
