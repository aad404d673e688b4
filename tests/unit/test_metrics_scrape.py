"""Exposition text → records (tui.core.sources.prom.exposition): exact window values from vLLM counters,
SGLang gauges without duplicates, restarts, and the records through the core statistics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _prom_util import FakeSglang, FakeVllm, reference_exposition

from tui.core.formats import LineParser
from tui.core.formats.vllm.rates import RATE_VLLM_V0_CUMULATIVE
from tui.core.model.records import RATE_DRAFTS, Marker, Record
from tui.core.sources.base import LineBatch
from tui.core.sources.prom.exposition import Converter, MetricsParseError
from tui.core.stats import SourceStats

# The shared reference file, as copied unchanged into the fixtures (tests/test_real_logs.py checks
# the copy against shared/ when that is beside the checkout).
REF = (
    Path(__file__).parent.resolve().parent
    / "fixtures"
    / "real_logs"
    / "vllm_prom_vllm-project-vllm_24049.txt"
)


def items(res) -> list[dict]:
    return [json.loads(line) for line in res.lines]


def records(res) -> list[dict]:
    return [d for d in items(res) if "marker" not in d]


def feed_stats(stats: SourceStats, parser: LineParser, res, first_no: int = 1) -> list:
    got = parser.feed_batch(LineBatch("m", res.lines, list(range(len(res.lines))), first_no, kind="metrics"))
    for it in got:
        stats.feed([it])
    return got


def test_vllm_windows_are_exact_counter_deltas():
    srv, conv = FakeVllm(engines=2, k=3), Converter()
    first = conv.feed(srv.text(), mono=0.0)
    assert records(first) == []  # the baseline: a lifetime total is not a window
    assert [d["marker"] for d in items(first)] == ["metrics_start"]
    assert items(first)[0]["config"] == {
        "model": srv.model,
        "speculative_config": {"num_speculative_tokens": 3},
    }
    srv.step(0, drafts=40, per_pos=[30, 20, 10], running=5)
    srv.step(1, drafts=10, per_pos=[5, 1, 0], running=2)
    res = conv.feed(srv.text(), mono=5.0)
    r0, r1 = records(res)
    assert r0["rank"] == "engine 0" and r1["rank"] == "engine 1"
    assert r0["accept_len"] == pytest.approx(1 + 60 / 40)  # MAL = 1 + Δaccepted / Δdrafts
    assert r0["accept_rate"] == pytest.approx(60 / 120)  # Δaccepted / Δdraft_tokens
    assert r0["per_position"] == pytest.approx([30 / 40, 20 / 40, 10 / 40])  # Δpos_i / Δdrafts
    assert (r0["accepted"], r0["drafted"], r0["num_drafts"]) == (60, 120, 40.0)
    assert r0["throughput"] == pytest.approx((40 + 60) / 5.0) and r0["running_req"] == 5
    assert r0["rate_definition"] == RATE_DRAFTS and r0["extra"]["source"] == "metrics"
    assert r1["accept_len"] == pytest.approx(1.6) and r1["accept_rate"] == pytest.approx(6 / 30)
    # no draft since the last scrape: idle, no record (never a 0)
    assert records(conv.feed(srv.text(), mono=10.0)) == []
    srv.step(1, drafts=4, per_pos=[4, 4, 4])
    only = records(conv.feed(srv.text(), mono=15.0))
    assert [r["rank"] for r in only] == ["engine 1"] and only[0]["accept_len"] == pytest.approx(4.0)
    assert only[0]["throughput"] == pytest.approx(16 / 5.0)


def test_vllm_restart_is_a_counter_reset_and_a_new_segment():
    srv, conv = FakeVllm(engines=1, k=2), Converter()
    parser, stats = LineParser("m"), SourceStats("m")
    feed_stats(stats, parser, conv.feed(srv.text(), mono=0.0))
    srv.step(0, 100, [80, 60])
    feed_stats(stats, parser, conv.feed(srv.text(), mono=5.0))
    srv.restart()  # the server restarts; 3 drafts before the next scrape
    srv.step(0, 3, [3, 0])
    res = conv.feed(srv.text(), mono=10.0)
    assert res.resets == 1
    assert [d.get("marker") for d in items(res)] == ["counter_reset", None]
    rec = records(res)[0]
    assert rec["accept_len"] == pytest.approx(2.0) and rec["num_drafts"] == 3.0  # counted from zero
    assert rec["extra"]["window"] == "since restart" and "throughput" not in rec
    got = feed_stats(stats, parser, res, 10)
    assert isinstance(got[0], Marker) and got[0].kind == "counter_reset"
    assert [s.index for s in stats.segments] == [0, 1] and stats.current.reason == "counter_reset"
    assert stats.segments[0].all.accept_len.mean == pytest.approx(1 + 140 / 100)
    assert stats.current.all.records == 1


def test_restart_seen_by_created_even_when_counters_grew_past():
    srv, conv = FakeVllm(engines=1, k=1), Converter()
    conv.feed(srv.text(), mono=0.0)
    srv.step(0, 2, [1])
    conv.feed(srv.text(), mono=1.0)
    srv.restart()
    srv.step(0, 50, [25])  # larger than before the restart: only _created tells
    res = conv.feed(srv.text(), mono=2.0)
    assert res.resets == 1 and records(res)[0]["num_drafts"] == 50.0


def test_vllm_records_feed_the_core_statistics():
    srv, conv = FakeVllm(engines=2, k=3), Converter()
    parser, stats = LineParser("m"), SourceStats("m")
    feed_stats(stats, parser, conv.feed(srv.text(), mono=0.0))
    windows = [(20, [15, 9, 4]), (30, [20, 10, 5]), (25, [25, 25, 25])]
    for n, (d, pp) in enumerate(windows, 1):
        srv.step(0, d, pp)
        srv.step(1, d, [0, 0, 0])
        feed_stats(stats, parser, conv.feed(srv.text(), mono=5.0 * n))
    seg = stats.current
    assert seg.config.model_path == srv.model and seg.config.num_speculative_tokens == 3
    assert seg.ranks["engine 0"].accept_len.mean == pytest.approx(sum(1 + sum(p) / d for d, p in windows) / 3)
    assert seg.ranks["engine 1"].accept_len.mean == 1.0
    e0 = seg.ranks["engine 0"]
    assert (e0.accepted, e0.drafted) == (sum(sum(p) for _, p in windows), sum(d * 3 for d, _ in windows))
    # pooled per position = Σ accepted_i / Σ drafts
    assert e0.per_position() == pytest.approx([60 / 75, 44 / 75, 34 / 75])
    assert seg.rate_definition().drafts_per_step == 3
    assert all(
        isinstance(it, Record) and it.kind == "metrics"
        for it in parser.feed_batch(LineBatch("m", records_lines(conv, srv), [0], 1, kind="metrics"))
    )


def records_lines(conv: Converter, srv: FakeVllm) -> list[str]:
    srv.step(0, 1, [1, 1, 1])
    return conv.feed(srv.text(), mono=100.0).lines[:1]


def test_sglang_gauges_one_record_per_new_interval_none_when_idle():
    srv, conv = FakeSglang(dp=2), Converter()
    first = conv.feed(srv.text())
    assert records(first) == [] and items(first)[0]["config"] == {"model": srv.model}
    assert records(conv.feed(srv.text())) == []  # gauges at 0: no decode yet
    srv.decode(0, 2.9, 0.63, 7.501234)
    srv.decode(1, 2.65, 0.55, 6.70321)
    got = records(conv.feed(srv.text()))
    assert [(r["rank"], r["accept_len"], r["accept_rate"], r["throughput"]) for r in got] == [
        ("DP0 TP0", 2.9, 0.63, 7.501234),
        ("DP1 TP1", 2.65, 0.55, 6.70321),
    ]
    assert all(r["family"] == "sglang" and "running_req" not in r for r in got)
    srv.prefill(0, running=3)  # a prefill line re-sets the gauges with the same spec values
    for _ in range(3):
        assert records(conv.feed(srv.text())) == []  # the same interval seen again: no duplicate
    srv.decode(1, 2.8, 0.6, 7.08)
    assert [r["rank"] for r in records(conv.feed(srv.text()))] == ["DP1 TP1"]


def test_sglang_restart_from_counters_going_back():
    srv, conv = FakeSglang(dp=1), Converter()
    conv.feed(srv.text())
    srv.decode(0, 3.0, 0.5, 100.25)
    conv.feed(srv.text())
    srv.restart()
    res = conv.feed(srv.text())
    assert res.resets == 1 and [d.get("marker") for d in items(res)] == ["counter_reset"]


def test_sglang_rate_definition_inferred_from_the_values():
    srv, conv = FakeSglang(dp=1), Converter()
    parser, stats = LineParser("m"), SourceStats("m")
    feed_stats(stats, parser, conv.feed(srv.text()))
    for i, al in enumerate([2.5, 3.1, 1.9, 3.7, 2.2]):
        srv.decode(0, al, (al - 1) / 3, 50.0 + i)  # era 4: (AL − 1) / (ndt − 1), 3 drafts
        feed_stats(stats, parser, conv.feed(srv.text()))
    rd = stats.current.rate_definition()
    assert rd.definition == RATE_DRAFTS and rd.drafts_per_step == 3
    assert stats.current.all.accept_len.n == 5


def test_vllm_v0_gauges_are_cumulative_records():
    text = (
        "# TYPE vllm:spec_decode_draft_acceptance_rate gauge\n"
        'vllm:spec_decode_draft_acceptance_rate{model_name="m"} %s\n'
        '# TYPE vllm:spec_decode_efficiency gauge\nvllm:spec_decode_efficiency{model_name="m"} %s\n'
        "# TYPE vllm:spec_decode_num_emitted_tokens_total counter\n"
        'vllm:spec_decode_num_emitted_tokens_total{model_name="m"} %s\n'
    )
    conv = Converter()
    assert records(conv.feed(text % (0.642, 0.598, 100))) == []
    rec = records(conv.feed(text % (0.65, 0.6, 250)))[0]
    assert rec["accept_rate"] == 0.65 and rec["cumulative"] is True
    assert rec["rate_definition"] == RATE_VLLM_V0_CUMULATIVE and rec["extra"]["system_efficiency"] == "0.6"
    assert records(conv.feed(text % (0.65, 0.6, 400))) == []  # gauges unchanged


def test_no_spec_metrics_and_bad_text():
    conv = Converter()
    res = conv.feed('# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine="0"} 1\n')
    assert res.lines == [] and "speculative decoding is off" in res.note
    assert "no speculative-decoding metric" in conv.feed("up 1\n").note
    with pytest.raises(MetricsParseError):
        conv.feed('vllm:spec_decode_num_drafts_total{engine="0" 12\n')


def test_reference_paste_metric_names_and_labels():
    text = reference_exposition(REF)
    conv = Converter()
    res = conv.feed(text)
    # the paste holds the drafts counters of 8 engines but no accepted-token counters: nothing to
    # derive a window from, and said so instead of a made-up number
    assert res.lines == [] and res.note
    full = text + "".join(
        f'vllm:spec_decode_num_accepted_tokens_total{{engine="{e}",instance="localhost:8000",'
        f'job="vllm",model_name="/home/models/Qwen3-0.6B"}} {e}\n'
        for e in range(8)
    )
    conv = Converter()
    res = conv.feed(full)
    assert res.found == ["vLLM V1 spec-decode counters (8 engines)"]
    assert sorted(res.lifetime) == sorted(f"localhost:8000 engine {e}" for e in range(8))
    assert res.lifetime["localhost:8000 engine 0"]["drafts"] == 22
    assert res.lifetime["localhost:8000 engine 2"]["accept_len"] == pytest.approx(1 + 2 / 29)


def test_rate_definition_follows_what_arrives_after_a_first_look():
    """A screen reads the rate definition before any record: it must not stay stuck on that."""
    srv, conv = FakeVllm(engines=1, k=3), Converter()
    parser, stats = LineParser("m"), SourceStats("m")
    assert stats.current.rate_definition().drafts_per_step is None  # nothing known yet
    feed_stats(stats, parser, conv.feed(srv.text(), mono=0.0))
    srv.step(0, 10, [5, 3, 1])
    feed_stats(stats, parser, conv.feed(srv.text(), mono=1.0))
    rd = stats.current.rate_definition()
    assert (rd.definition, rd.drafts_per_step) == (RATE_DRAFTS, 3)
    assert stats.current.to_dict()["accept_rate_normalized"]["mean"] == pytest.approx(0.9 / 3)
