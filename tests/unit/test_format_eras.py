"""Eras decided by evidence, restarts, and every printed number kept (issue 22 items 1-3): line by
line, on the line parser and the scanners. The lines follow the format strings quoted in
docs/formats.md ("Eras"), which cites each release's file and line."""

from __future__ import annotations

import pytest

from tui.core.formats import LineParser
from tui.core.formats.fastscan import refused_at, scan_chunk
from tui.core.formats.markers import MAX_LITERAL, parse_server_args
from tui.core.formats.vllm.spec import no_bonus_token
from tui.core.model.records import RESTART, Marker, Record
from tui.core.stats import SourceStats

V1 = (
    "INFO 05-01 10:00:10 [metrics.py:82] SpecDecoding metrics: Draft acceptance rate: {r}%, Mean acceptance "
    "length: {al}, Accepted: {a} tokens, Drafted: {d} tokens, Per-position acceptance rate: {pp}"
)


def items(lines: list[str]) -> list:
    p = LineParser("t", year=2026, ref_time=None)
    return [x for i, line in enumerate(lines) if (x := p.feed(line, i + 1, 0)) is not None]


def test_vllm_before_0_9_gets_the_bonus_token_from_the_per_position_sum(scanner):
    # vLLM 0.8.5 (v1/spec_decode/metrics.py:82): accepted / drafts = 0.67; its list sums to 0.67
    old = V1.format(r="22.3", al="0.67", a=201, d=900, pp="0.400, 0.200, 0.070")
    new = V1.format(r="22.3", al="1.67", a=201, d=900, pp="0.400, 0.200, 0.070")  # 0.9.0 on
    (r_old,) = items([old])
    (r_new,) = items([new])
    assert r_old.accept_len == r_new.accept_len == 1.67
    assert r_old.extra["accept_len_printed"] == "0.67" and "no bonus token" in r_old.extra["accept_len_scale"]
    assert "accept_len_scale" not in r_new.extra
    # each scanner (this test runs with both) leaves the old era's lines to the line parser, and
    # refused_at points the line parser at such a line inside a buffer it reads fast otherwise
    assert scan_chunk((old + "\n").encode(), 2026) is None
    assert scan_chunk((new + "\n").encode(), 2026) is not None
    if scanner == "native":
        buf = (new + "\n" + old + "\n" + new + "\n").encode()
        assert refused_at(buf, 2026) == len(new) + 1


@pytest.mark.parametrize(
    "al,pp,old",
    [
        (0.67, (0.4, 0.2, 0.07), True),
        (1.67, (0.4, 0.2, 0.07), False),
        (0.674, (0.4, 0.2, 0.07), True),  # within the rounding of %.2f and 3 x %.3f
        (0.69, (0.4, 0.2, 0.07), False),
        (0.5, None, True),  # no list: only a value below 1 tells
        (1.5, None, False),
        (7.5, (0.1, 123456789.1), False),
    ],
)
def test_no_bonus_token_evidence(al, pp, old):
    assert no_bonus_token(al, pp) is old


def test_v0_system_efficiency_and_counter_reset_opens_a_segment():
    line = (
        "INFO 10-16 19:05:{s} metrics.py:367] Speculative metrics: Draft acceptance rate: 0.642, System "
        "efficiency: {e}, Number of speculative tokens: 3, Number of accepted tokens: {a}, Number of draft "
        "tokens: {d}, Number of emitted tokens: {m}."
    )
    got = items(
        [
            line.format(s="47", e="0.598", a=8547, d=13311, m=10616),
            line.format(s="52", e="0.600", a=9000, d=14000, m=11200),
            line.format(s="57", e="0.500", a=30, d=60, m=50),  # went back: a new server
        ]
    )
    assert [r.system_efficiency for r in got] == [0.598, 0.6, 0.5]
    assert RESTART in got[2].extra and RESTART not in got[1].extra
    st = SourceStats("t")
    st.feed(got)
    d = st.to_dict()
    assert [s["reason"] for s in d["segments"]] == ["start", "counter_reset"]
    assert d["segments"][1]["system_efficiency"] == {"last": 0.5, "since": "server start"}


def test_v1_throughputs_are_numbers():
    line = (
        "(APIServer pid=1) INFO 05-19 10:30:33 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: "
        "2.53, Accepted throughput: 553.18 tokens/s, Drafted throughput: 721.24 tokens/s, Accepted: 5533 tokens, "
        "Drafted: 7214 tokens, Per-position acceptance rate: 0.832, 0.702, Avg Draft acceptance rate: 76.7%"
    )
    (r,) = items([line])
    assert (r.accepted_throughput, r.drafted_throughput, r.accept_len) == (553.18, 721.24, 2.53)


def test_llamacpp_statistics_graphs_reused_and_restart_markers():
    lines = [
        "0.00.010.001 I cmn  common_param: common_params_print_info: build 6123 (a1b2c3d) with cc for x86_64",
        "0.00.020.002 I srv          main: initializing ...",
        "0.05.534.908 I slot print_timing: id  0 | task 0 |    graphs reused =        118",
        "0.05.534.915 I slot print_timing: id  0 | task 0 | draft acceptance = 0.66471 (  226 accepted /   340 "
        "generated), mean len =  2.88",
        "0.05.534.960 I spec common_specu: statistics        draft-mtp: #calls(b,g,a) =    1    120    120, "
        "#gen drafts =    120, #acc drafts =   101, #gen tokens =    340, #acc tokens =   226, #mean acc len = 2.88",
        "0.00.009.000 I srv          main: initializing ...",  # llama-server started again
        "0.03.000.000 I spec common_specu: statistics        draft-mtp: #calls(b,g,a) =    1     50     50, "
        "#gen drafts =     50, #acc drafts =    40, #gen tokens =    150, #acc tokens =   90",
    ]
    got = items(lines)
    kinds = [x.kind for x in got]
    assert kinds == ["llamacpp_start", "llamacpp_start", "timing", "stats", "llamacpp_start", "stats"]
    assert isinstance(got[0], Marker) and got[0].version == "b6123"
    timing, stats, after = got[2], got[3], got[5]
    assert timing.graphs_reused == 118
    # after a per-request line with its length: the steps only (the tokens are the request's)
    assert (stats.num_drafts, stats.accepted, stats.drafted) == (120.0, None, None)
    assert stats.accept_len_derived == pytest.approx(1 + 226 / 120)
    assert (stats.gen_drafts, stats.acc_drafts) == (120, 101)
    # the startup line reset the counters: the next statistics line counts from zero, no restart flag
    assert RESTART not in after.extra and after.num_drafts == 50.0 and after.accepted == 90


def test_llamacpp_counters_going_back_open_a_segment():
    stat = (
        "statistics        draft: #calls(b,g,a) = {b} {a} {a}, #gen drafts = {a}, #acc drafts = 1, "
        "#gen tokens = {g}, #acc tokens = {c}"
    )
    got = items(
        [
            stat.format(b=1, a=100, g=300, c=150),
            stat.format(b=2, a=200, g=600, c=320),
            stat.format(b=1, a=40, g=100, c=60),
        ]
    )
    assert [RESTART in r.extra for r in got] == [False, False, True]
    assert (got[2].accepted, got[2].num_drafts) == (60, 40.0)  # from zero
    st = SourceStats("t")
    st.feed(got)
    segs = st.to_dict()["segments"]
    assert [s["reason"] for s in segs] == ["start", "counter_reset"]
    assert segs[0]["accept_len"]["pooled"]["value"] == pytest.approx(1 + 320 / 200)
    assert segs[1]["accept_len"]["pooled"]["value"] == pytest.approx(1 + 60 / 40)


def test_sglang_one_line_dict_server_args_is_read_as_a_literal():
    line = (
        "[2026-08-01 10:00:00] server_args={'model_path': 'Qwen/Qwen3-8B', 'tp_size': 2, 'speculative_algorithm': "
        "'EAGLE3', 'speculative_num_steps': 5, 'speculative_eagle_topk': 4, 'speculative_num_draft_tokens': 8, "
        "'speculative_config': None, 'dtype': 'auto', 'nested': {'a': [1, 2]}}"
    )
    (m,) = items([line])
    assert isinstance(m, Marker) and m.kind == "server_args"
    assert m.config["speculative_num_steps"] == 5 and m.config["model_path"] == "Qwen/Qwen3-8B"
    st = SourceStats("t")
    st.feed([m])
    assert st.current.config.label().startswith("EAGLE3 steps=5 topk=4 ndt=8")
    # a value that is not a literal, or a dump too long to evaluate: read by the patterns instead
    assert (
        parse_server_args("server_args={'speculative_num_steps': 3, 'x': <Enum.A: 1>}")[
            "speculative_num_steps"
        ]
        == 3
    )
    big = "server_args={'speculative_num_steps': 3, 'pad': '" + "x" * MAX_LITERAL + "'}"
    assert parse_server_args(big)["speculative_num_steps"] == 3


def test_vllm_0_3x_startup_lines_are_restart_markers():
    got = items(
        [
            "(APIServer pid=1) INFO 05-01 10:00:00 [launcher.py:367] vLLM server version 0.33.0, serving model m/x",
            "(APIServer pid=1) INFO 05-01 11:00:00 [launcher.py:367] ",
            " \u2584\u2584 \u2584\u2588 \u2588     \u2588     \u2588 \u2580\u2584\u2580 \u2588  version 0.33.1",
        ]
    )
    assert [(m.kind, m.version) for m in got] == [("version", "0.33.0"), ("version", "0.33.1")]
    assert got[0].config == {"model": "m/x"}
    assert all(isinstance(m, Marker) for m in got) and not any(isinstance(m, Record) for m in got)


def test_llamacpp_clock_going_back_opens_a_segment_on_every_path():
    line = (
        "{t} I slot print_timing: id  0 | task {n} | draft acceptance = 0.50000 (   {a} accepted /   100 "
        "generated), mean len =  {al:.2f}\n"
    )
    times = ["0.10.000.000", "0.20.000.000", "0.30.500.000", "0.08.000.000", "0.09.000.000"]  # restart
    text = "".join(line.format(t=t, n=i, a=40 + i, al=1.5 + i / 10) for i, t in enumerate(times))
    slow = SourceStats("t")
    slow.feed(items(text.splitlines()))
    sc = scan_chunk(text.encode(), 2026)
    assert sc is not None and len(sc.runs) == 1  # the Python scanner reads these lines
    fast = SourceStats("t")
    fast.add_columns(sc.runs[0])
    for st in (slow, fast):
        d = st.to_dict()
        assert [(s["reason"], s["records"]) for s in d["segments"]] == [("start", 3), ("clock_reset", 2)]
        assert d["segments"][1]["start_line"] == 4
