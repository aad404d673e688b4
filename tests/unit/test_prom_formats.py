"""New /metrics formats (issue 12 item 4): TensorRT-LLM and llama.cpp spec-decode counters and
SGLang's adaptive ``spec_num_steps`` / ``spec_num_draft_tokens`` gauges.

Two independent checks: the research fixtures (tests/fixtures/formats/, expected values from
docs/formats-metrics.md), and held-out servers (tests/_prom_util.py) written from the
upstream metric names, that simulate verify steps request by request and know the true acceptance
of each window. ``specwatch summary --json`` end to end against each of the three over HTTP is in
tests/integration/test_prom_formats_cli.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _prom_util import (
    FakeAdaptiveSglang,
    FakeLlamacpp,
    FakeSglang,
    FakeTrtllm,
    llamacpp_text,
)
from prometheus_client import CollectorRegistry, Gauge

from tui.core.formats import LineParser
from tui.core.formats.trtllm.metrics import ITERATION, PER_POSITION, RATE_ONLY
from tui.core.model.records import RATE_DRAFTS
from tui.core.sources.base import LineBatch
from tui.core.sources.prom.exposition import Converter
from tui.core.stats import SourceStats

ROOT = Path(__file__).parent.resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "formats"


def fixture(name: str) -> str:
    return (FIX / name).read_text(encoding="utf-8")


def items(res) -> list[dict]:
    return [json.loads(line) for line in res.lines]


def records(res) -> list[dict]:
    return [d for d in items(res) if "marker" not in d]


def markers(res) -> list[str]:
    return [d["marker"] for d in items(res) if "marker" in d]


class Fed:
    """A converter whose output goes through the line parser into the core statistics."""

    def __init__(self) -> None:
        self.conv, self.parser, self.stats = Converter(), LineParser("m"), SourceStats("m")
        self.t, self.no = 0.0, 1

    def feed(self, text: str):
        self.t += 5.0
        res = self.conv.feed(text, mono=self.t)
        batch = LineBatch("m", res.lines, list(range(len(res.lines))), self.no, kind="metrics")
        self.no += len(res.lines)
        self.stats.feed(self.parser.feed_batch(batch))
        return res


# -- the research fixtures ------------------------------------------------------------------------
def test_trtllm_fixture_pooled_window():
    conv = Converter()
    first = conv.feed(fixture("trtllm_metrics_1.txt"), mono=0.0)
    assert records(first) == [] and markers(first) == ["metrics_start"]
    assert items(first)[0]["family"] == "trtllm"
    assert items(first)[0]["config"] == {
        "model": "nvidia/Llama-3.3-70B-Instruct-FP8",
        "speculative_config": {
            "method": "Eagle3",
            "num_speculative_tokens": 3,
            "model": "yuhuili/EAGLE3-LLaMA3.3-Instruct-70B",
        },
    }
    res = conv.feed(fixture("trtllm_metrics_2.txt"), mono=10.0)
    (r,) = records(res)
    assert r["family"] == "trtllm" and r["rate_definition"] == RATE_DRAFTS
    assert r["accept_len"] == pytest.approx(2.92) and r["accept_rate"] == pytest.approx(0.64)
    assert (r["accepted"], r["drafted"], r["num_drafts"]) == (7680, 12000, 4000.0)
    assert r["per_position"] == pytest.approx([0.82, 0.64, 0.46])
    assert r["running_req"] == 31 and r["throughput"] == pytest.approx((71102 - 51208) / 10.0)
    assert r["extra"]["steps_from"] == PER_POSITION and r["extra"]["iteration_accept_rate"] == "0.64"
    life = res.lifetime["all"]  # per-position counters: 1 + 26580 / 13700
    assert life["accept_len"] == pytest.approx(2.940146, abs=1e-6) and life["drafts"] == 13700


def test_trtllm_fixture_gauge_is_not_the_pooled_value():
    conv = Converter()
    conv.feed(fixture("trtllm_metrics_1.txt"), mono=0.0)
    (r,) = records(conv.feed(fixture("trtllm_metrics_2.txt"), mono=5.0))
    assert r["accept_len"] != 3.0  # trtllm_spec_decode_acceptance_length: the last iteration only


def test_llamacpp_fixture_window_and_lifetime():
    conv = Converter()
    first = conv.feed(fixture("llamacpp_metrics_1.txt"), mono=0.0)
    assert records(first) == [] and items(first)[0]["family"] == "llamacpp"
    assert first.lifetime["all"]["accept_len"] == pytest.approx(2.866667, abs=1e-6)
    assert first.lifetime["all"]["accept_rate"] == pytest.approx(0.658824, abs=1e-6)
    res = conv.feed(fixture("llamacpp_metrics_2.txt"), mono=4.0)
    (r,) = records(res)
    assert r["family"] == "llamacpp" and r["rate_definition"] == RATE_DRAFTS
    assert r["accept_len"] == pytest.approx(3.007692, abs=1e-6)
    assert r["accept_rate"] == pytest.approx(0.669231, abs=1e-6)
    assert r["per_position"] == pytest.approx([0.846154, 0.653846, 0.507692], abs=1e-6)
    assert (r["accepted"], r["drafted"], r["num_drafts"]) == (1566, 2340, 780.0)
    assert r["extra"]["drafts_per_step"] == "3" and r["running_req"] == 0
    assert res.lifetime["all"]["accept_len"] == pytest.approx(2.909302, abs=1e-6)
    assert res.lifetime["all"]["accept_rate"] == pytest.approx(0.662097, abs=1e-6)


def test_sglang_adaptive_fixture_steps_are_the_segment_config():
    fed = Fed()
    idle = FakeSglang(dp=0).text()  # the server before its first decode: no gauge series yet
    assert markers(fed.feed(idle)) == []
    fed.conv = Converter()  # the fixtures' own first scrape starts the run
    fed.feed(fixture("sglang_metrics_adaptive.txt"))
    one = fed.feed(fixture("sglang_metrics_adaptive_2.txt"))
    assert markers(one) == ["spec_steps"]
    (r,) = records(one)
    assert r["accept_len"] == pytest.approx(4.95) and r["extra"]["num_steps"] == "7"
    segs = fed.stats.to_dict()["segments"]
    assert [s["config"]["num_steps"] for s in segs] == [7]  # the baseline's segment had no record
    assert segs[0]["config"]["num_draft_tokens"] == 8 and segs[0]["rate_definition"]["drafts_per_step"] == 7
    assert segs[0]["accept_rate_normalized"]["mean"] == pytest.approx(0.5642857)


def test_sglang_adaptive_fixtures_two_records_two_segments():
    conv = Converter()
    zero = fixture("sglang_metrics_adaptive.txt").replace(" 2.7142857142857144", " 0.0")
    zero = zero.replace(" 0.5714285714285714", " 0.0")  # before the first decode log: gauges at 0
    fed = Fed()
    fed.conv = conv
    fed.feed(zero)
    fed.feed(fixture("sglang_metrics_adaptive.txt"))
    fed.feed(fixture("sglang_metrics_adaptive_2.txt"))
    segs = fed.stats.to_dict()["segments"]
    assert [(s["config"]["num_steps"], s["records"]) for s in segs] == [(3, 1), (7, 1)]
    assert [s["accept_len"]["mean"] for s in segs] == pytest.approx([2.7142857, 4.95])
    assert [s["accept_rate_normalized"]["mean"] for s in segs] == pytest.approx([0.5714286, 0.5642857])
    assert segs[1]["reason"] == "spec_steps"


# -- held-out servers, written from the upstream metric names -------------------------------------


def test_trtllm_held_out_fresh_server_counts_steps_with_k():
    srv, fed = FakeTrtllm(k=4), Fed()
    fed.feed(srv.text())  # started, idle: no per-position series yet
    srv.iterate({1: 3, 2: 1, 3: 0})
    srv.iterate({1: 4, 2: 2, 3: 1})
    (r,) = records(fed.feed(srv.text()))
    assert r["extra"]["steps_from"] == ITERATION and "per_position" not in r
    assert r["accept_len"] == pytest.approx(1 + 11 / 6) and r["num_drafts"] == 6.0
    assert r["accept_rate"] == pytest.approx(11 / 24) and r["running_req"] == 3
    srv.finish(1)  # per-position series appear now: the run keeps counting with k
    srv.iterate({2: 0, 3: 2})
    (r,) = records(fed.feed(srv.text()))
    assert r["extra"]["steps_from"] == ITERATION and r["accept_len"] == pytest.approx(1 + 2 / 2)
    # request 1 (steps accepting 3 and 4 of 4) finished: per position, over its own 2 steps
    assert r["per_position"] == pytest.approx([1.0, 1.0, 1.0, 0.5])
    assert r["extra"]["per_position_from"] == PER_POSITION
    assert records(fed.feed(srv.text())) == []  # no iteration: idle
    seg = fed.stats.to_dict()["segments"][-1]
    assert seg["config"]["num_speculative_tokens"] == 4 and seg["config"]["algorithm"] == "Eagle3"
    assert seg["accept_len"]["weighted_mean"] == pytest.approx(1 + srv.iter_acc / srv.iter_steps)
    assert seg["rate_definition"]["drafts_per_step"] == 4
    assert fed.stats.to_dict()["segments"][-1]["accept_rate"]["weighted_mean"] == pytest.approx(13 / 32)


def test_trtllm_held_out_running_server_uses_per_position_counters():
    srv = FakeTrtllm(k=3)
    srv.iterate({1: 2, 2: 0})
    srv.finish(1)
    srv.finish(2)
    fed = Fed()
    fed.feed(srv.text())
    srv.iterate({3: 3, 4: 1})
    assert records(fed.feed(srv.text())) == []  # iterations ran but no request finished yet
    srv.iterate({3: 2, 4: 0})
    before_steps, before_acc = srv.fin_steps, srv.fin_acc
    srv.finish(3)
    srv.finish(4)
    (r,) = records(fed.feed(srv.text()))
    steps, acc = srv.fin_steps - before_steps, srv.fin_acc - before_acc
    assert r["extra"]["steps_from"] == PER_POSITION and (r["num_drafts"], r["accepted"]) == (steps, acc)
    assert r["accept_len"] == pytest.approx(1 + 6 / 4)
    # position i: steps that accepted more than i drafts, over the steps
    assert r["per_position"] == pytest.approx([3 / 4, 2 / 4, 1 / 4])
    assert r["accept_rate"] == pytest.approx(6 / 12)
    srv.iterate({5: 0})
    srv.finish(5)  # drafted at every position, accepted at none: measured zeros, not gaps
    (r,) = records(fed.feed(srv.text()))
    assert r["per_position"] == [0.0, 0.0, 0.0] and r["accept_len"] == 1.0


def test_trtllm_without_k_or_per_position_gives_the_rate_only():
    srv, conv = FakeTrtllm(k=5, info=False), Converter()
    conv.feed(srv.text(), mono=0.0)
    srv.iterate({1: 5, 2: 2})
    (r,) = records(conv.feed(srv.text(), mono=1.0))
    assert r["extra"]["steps_from"] == RATE_ONLY and "accept_len" not in r and "num_drafts" not in r
    assert r["accept_rate"] == pytest.approx(7 / 10) and (r["accepted"], r["drafted"]) == (7, 10)


def test_trtllm_draft_tokens_not_a_multiple_of_k_give_no_accept_len():
    srv, conv = FakeTrtllm(k=4), Converter()
    conv.feed(srv.text(), mono=0.0)
    srv.iterate({1: 2})
    srv.draft.labels(*srv.lv).inc(3)  # a shorter draft somewhere: steps = Δdraft / k is not exact
    (r,) = records(conv.feed(srv.text(), mono=1.0))
    assert "accept_len" not in r and "num_drafts" not in r and "not a multiple" in r["extra"]["steps_unknown"]
    assert r["accept_rate"] == pytest.approx(2 / 7)


def test_trtllm_restarts_counter_reset_and_new_config():
    srv, conv = FakeTrtllm(k=4), Converter()
    conv.feed(srv.text(), mono=0.0)
    srv.iterate({1: 4, 2: 4})
    conv.feed(srv.text(), mono=1.0)
    srv.restart()
    srv.iterate({1: 1})
    res = conv.feed(srv.text(), mono=2.0)
    assert res.resets == 1 and markers(res) == ["counter_reset"]
    (r,) = records(res)  # the counters since the restart are the first window of the new run
    assert r["accept_len"] == pytest.approx(2.0) and r["extra"]["window"] == "since restart"
    srv.method, srv.k = "NGram", 2  # same counters, another config: a new run too
    srv.registry = CollectorRegistry()
    info = Gauge(
        "trtllm_speculative_config_info",
        "spec config",
        ["model_name", "engine_type", "spec_enabled", "spec_method", "spec_num_tokens"],
        registry=srv.registry,
    )
    info.labels(*srv.lv, "true", "NGram", "2").set(1)
    text = srv.text() + "\n".join(
        line for line in FakeTrtllm(k=4).text().splitlines() if "config_info" not in line
    )
    res = conv.feed(text, mono=3.0)
    assert markers(res) == ["counter_reset"]
    assert items(res)[0]["config"]["speculative_config"]["method"] == "NGram"


@pytest.mark.parametrize("suffix,typed", [("_total", True), ("", True), ("", False)])
def test_llamacpp_held_out_windows(suffix, typed):
    srv, fed = FakeLlamacpp(suffix, typed), Fed()
    res = fed.feed(srv.text(processing=0))  # before the first speculative request: no per-pos series
    assert res.found == ["llama.cpp spec-decode counters"] and records(res) == []
    srv.request([(4, 4), (4, 2), (3, 0), (4, 1)])
    (r,) = records(fed.feed(srv.text()))
    assert r["accept_len"] == pytest.approx(1 + 7 / 4) and r["accept_rate"] == pytest.approx(7 / 15)
    assert r["per_position"] == pytest.approx([3 / 4, 2 / 4, 1 / 4, 1 / 4])
    assert records(fed.feed(srv.text())) == []  # idle: no record, never a 0
    srv.request([(2, 2), (2, 0)])
    srv.request([(6, 5)])
    (r,) = records(fed.feed(srv.text()))
    assert (r["num_drafts"], r["accepted"], r["drafted"]) == (3.0, 7, 10)
    assert r["per_position"] == pytest.approx([2 / 3, 2 / 3, 1 / 3, 1 / 3, 1 / 3])
    d = fed.stats.to_dict()
    assert d["segments"][-1]["config"]["family"] == "llamacpp"
    assert d["accept_len"]["weighted_mean"] == pytest.approx(1 + 14 / 7)  # pooled over both windows


def test_llamacpp_restart_and_no_spec_counters():
    srv, conv = FakeLlamacpp(), Converter()
    srv.request([(3, 3)] * 10)
    conv.feed(srv.text(), mono=0.0)
    srv2 = FakeLlamacpp()
    srv2.request([(3, 1)])
    res = conv.feed(srv2.text(), mono=1.0)
    assert res.resets == 1 and markers(res) == ["counter_reset"]
    assert records(res)[0]["accept_len"] == pytest.approx(2.0)
    plain = llamacpp_text({"tokens_predicted_total": 10}, [], 0)
    assert "llama.cpp metrics without spec-decode counters" in Converter().feed(plain).note


def test_sglang_held_out_steps_changes_open_segments_with_their_own_normalisation():
    srv, fed = FakeAdaptiveSglang(dp=2), Fed()
    fed.feed(srv.text())
    srv.adaptive_decode(3, 60, 40, 100.0)
    assert markers(fed.feed(srv.text())) == ["spec_steps"]  # first known: the empty segment takes it
    assert len(fed.stats.segments) == 1
    srv.adaptive_decode(3, 72, 40, 110.0)
    fed.feed(srv.text())
    srv.adaptive_decode(7, 150, 40, 120.0)
    res = fed.feed(srv.text())
    assert markers(res) == ["spec_steps"] and len(records(res)) == 2
    for _ in range(2):
        assert fed.feed(srv.text()).lines == []  # the same window again: no record, no marker
    srv.adaptive_decode(7, 130, 40, 130.0)
    fed.feed(srv.text())
    segs = fed.stats.to_dict()["segments"]
    assert [(s["config"]["num_steps"], s["records"]) for s in segs] == [(3, 4), (7, 4)]
    assert segs[0]["accept_rate_normalized"]["mean"] == pytest.approx((66 / 40) / 3)
    assert segs[1]["accept_rate_normalized"]["mean"] == pytest.approx((140 / 40) / 7)
    assert segs[1]["rate_definition"]["drafts_per_step"] == 7
