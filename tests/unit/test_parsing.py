"""The parser against the edge cases of pasted and decorated lines (docs/formats.md), one group per checklist item."""

from __future__ import annotations

import math

import pytest

from tui.core.formats import LineParser
from tui.core.formats.timestamps import TimestampReader
from tui.core.model.records import EngineStats, Malformed, Marker, Record
from tui.core.stats import SourceStats

NEW = (
    "[2026-08-23 09:06:21 TP0 EP0] Decode batch, #running-req: 1, #full token: 166144, full token usage: 0.02, "
    "#swa token: 512, swa token usage: 0.00, accept len: 3.55, accept rate: 0.51, cuda graph: True, "
    "gen throughput (token/s): 3.22, #queue-req: 0"
)


def one(line: str, parser: LineParser | None = None):
    p = parser or LineParser("t")
    return p.feed(line, 1, 0)


def rec(line: str, parser: LineParser | None = None) -> Record:
    r = one(line, parser)
    assert isinstance(r, Record), r
    return r


# §5.1 `.` vs `,`, the iteration tag and the `iter: N,` form ------------------------------------
@pytest.mark.parametrize(
    "head", ["Decode batch.", "Decode batch,", "Decode batch [1234],", "Decode batch. iter: 77,"]
)
def test_decode_heads(head):
    r = rec(
        f"[2025-10-22 10:00:00 TP0] {head} #running-req: 1, #token: 108, token usage: 0.00, "
        f"accept len: 2.17, accept rate: 0.54, cuda graph: True, gen throughput (token/s): 0.39, #queue-req: 0, "
    )
    assert (r.accept_len, r.accept_rate, r.running_req, r.throughput, r.queue_req) == (2.17, 0.54, 1, 0.39, 0)
    if "1234" in head:
        assert r.extra["iter"] == "1234"
    if "77" in head:
        assert r.extra["iter"] == "77"


# §5.2 trailing ", " and spaces; §5.3 fields that come and go -----------------------------------
def test_newest_hybrid_line():
    r = rec(NEW)
    assert r.family == "sglang" and r.kind == "decode"
    assert r.rank == "TP0 EP0"
    assert (r.accept_len, r.accept_rate, r.tokens, r.token_usage) == (3.55, 0.51, 166144, 0.02)
    assert r.graph is True
    assert r.extra["#swa token"] == "512" and r.extra["swa token usage"] == "0.00"


def test_graph_labels_and_pd_fields_and_unknown_extras():
    r = rec(
        "[2026-07-21 15:00:13 TP0 EP0] Decode batch, #running-req: 24, #token: 233600, token usage: 0.66, "
        "accept len: 3.05, accept rate: 0.68, npu graph: True, gen throughput (token/s): 239.06, #queue-req: 2"
    )
    assert r.graph is True and r.extra["graph_label"] == "npu graph"
    r = rec(
        "[2025-06-06 20:31:47 DP25 TP25] Decode batch. #running-req: 43, #token: 0, token usage: 0.00, "
        "pre-allocated usage: 0.00, #prealloc-req: 0, #transfer-req: 1, #retracted-req: 0, cuda graph: False, "
        "gen throughput (token/s): 385.00, #queue-req: 0"
    )
    assert r.accept_len is None and r.graph is False
    assert r.extra["#transfer-req"] == "1" and r.rank == "DP25 TP25"
    r = rec(
        "[2025-03-24 02:56:41 TP0] Decode batch. #running-req: 32, #token: 7352, token usage: 0.01, "
        "accept len: 2.54, gen throughput (token/s): 39.33, largest-len: 0, #queue-req: 68, "
    )
    assert r.accept_len == 2.54 and r.accept_rate is None and r.extra["largest-len"] == "0"
    # MFU and occupancy suffixes.
    r = rec(NEW + ", est. decode TFLOPS/s (per GPU): 12.50, fwd occupancy: 87.50%")
    assert r.extra["fwd occupancy"] == "87.50%" and r.accept_len == 3.55


# §5.4 per-position lists share the separator -----------------------------------------------
def test_vllm_final_format_per_position():
    line = (
        "(APIServer pid=5020) INFO 05-19 10:30:33 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.53, "
        "Accepted throughput: 553.18 tokens/s, Drafted throughput: 721.24 tokens/s, Accepted: 5533 tokens, "
        "Drafted: 7214 tokens, Per-position acceptance rate: 0.832, 0.702, Avg Draft acceptance rate: 76.7%"
    )
    r = rec(line)
    assert r.family == "vllm" and r.kind == "spec"
    assert (r.accept_len, r.accept_rate, r.accepted, r.drafted) == (2.53, 0.767, 5533, 7214)
    assert r.per_position == (0.832, 0.702)
    assert r.num_drafts == 7214 / 2
    assert r.process == "APIServer pid=5020"


def test_vllm_all_v1_forms_and_newest_variant():
    f1 = rec(
        "Speculative metrics: Draft acceptance rate: 1.000, Number of accepted tokens: 66, Number of draft tokens: 66, "
    )
    assert (f1.accept_rate, f1.accepted, f1.drafted, f1.kind) == (1.0, 66, 66, "spec")
    f2 = rec("SpecDecoding metrics: Draft acceptance rate: 100.0%, Accepted: 66 tokens, Drafted: 66 tokens")
    assert (f2.accept_rate, f2.accepted) == (1.0, 66)
    f3 = rec(
        "INFO 09-01 14:28:09 [metrics.py:96] SpecDecoding metrics: Draft acceptance rate: 88.8%, Mean acceptance "
        "length: 5.44, Accepted: 262 tokens, Drafted: 295 tokens, Per-position acceptance rate: 0.983, 0.900, 0.850"
    )
    assert (f3.accept_len, f3.accept_rate, f3.per_position) == (5.44, 0.888, (0.983, 0.9, 0.85))
    f5 = rec(
        "SpecDecoding metrics: Mean acceptance length: 2.10, Accepted throughput: 1.00 tokens/s, Drafted throughput: "
        "2.00 tokens/s, Accepted: 10 tokens, Drafted: 20 tokens, Rejected: 10 tokens, Effective tokens/forward: 2.10, "
        "Proposer latency: 0.001000 s, Verification latency: 0.002000 s, Per-position acceptance rate: 0.600, 0.400, "
        "Avg Draft acceptance rate: 50.0%"
    )
    assert f5.accept_len == 2.1 and f5.extra["Rejected"] == "10 tokens" and f5.per_position == (0.6, 0.4)


# §5.5 percent vs fraction; §5.6 nan / inf -------------------------------------------------------
def test_nan_rates_are_kept_but_never_averaged():
    r = rec(
        "SpecDecoding metrics: Mean acceptance length: 1.00, Accepted: 0 tokens, Drafted: 0 tokens, "
        "Per-position acceptance rate: nan, nan, Avg Draft acceptance rate: nan%"
    )
    assert math.isnan(r.accept_rate)
    st = SourceStats("t")
    st.feed([r])
    d = st.to_dict()
    assert d["accept_rate"]["n"] == 0 and d["accept_rate"]["nonfinite"] == 1
    assert d["accept_rate"]["mean"] is None  # not 0.0
    r = rec(
        "Speculative metrics: Draft acceptance rate: inf, Number of accepted tokens: 1, Number of draft tokens: 0, "
    )
    assert r.accept_rate == math.inf


# §5.7 V0 cumulative counters -----------------------------------------------------------------
def test_v0_differences_and_restart_of_counters():
    p = LineParser("t")
    fmt = (
        "INFO 10-16 19:05:47 metrics.py:367] Speculative metrics: Draft acceptance rate: {r}, System efficiency: 0.598, "
        "Number of speculative tokens: 3, Number of accepted tokens: {a}, Number of draft tokens: {d}, "
        "Number of emitted tokens: {e}."
    )
    a = rec(fmt.format(r="0.642", a=8547, d=13311, e=10616), p)
    assert a.kind == "spec_v0" and a.cumulative and a.accept_len is None
    assert a.accept_len_derived == pytest.approx(10616 / (13311 / 3))  # 2.39, the doc's check
    b = rec(fmt.format(r="0.650", a=8647, d=13461, e=10736), p)
    assert b.accept_rate_derived == pytest.approx(100 / 150)
    assert b.accept_len_derived == pytest.approx(120 / (150 / 3))
    c = rec(fmt.format(r="0.5", a=5, d=10, e=8), p)  # counters went back: a restart
    assert c.accept_rate_derived == 0.5
    doubled = rec(
        "INFO 04-01 00:00:00 metrics.py:1] Speculative metrics: Draft acceptance rate: 0.500, System efficiency: "
        "0.5, Number of speculative tokens: 2, Number of accepted tokens: 5, Number of draft tokens tokens: 10, "
        "Number of emitted tokens tokens: 9."
    )
    assert doubled.drafted == 10 and doubled.accept_len_derived == pytest.approx(9 / 5)


# §5.8 ranks and engines ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "tags,rank",
    [
        ("", ""),
        (" TP0", "TP0"),
        (" DP6 TP6", "DP6 TP6"),
        (" TP0 EP0", "TP0 EP0"),
        (" DP1 PP0 ATTN_CP1 MOE_DP0 TP3 EP3", "DP1 PP0 ATTN_CP1 MOE_DP0 TP3 EP3"),
    ],
)
def test_rank_tags(tags, rank):
    r = rec(f"[2026-01-01 00:00:00{tags}] Decode batch, #running-req: 1, accept len: 2.00, cuda graph: True")
    assert r.rank == rank


def test_engine_pairing_per_process():
    p = LineParser("t")
    e2 = one(
        "(APIServer pid=95669) INFO 07-20 18:11:49 [loggers.py:271] Engine 002: Avg prompt throughput: 0.1 tokens/s, "
        "Avg generation throughput: 43.3 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 10.1%, "
        "Prefix cache hit rate: 0.0%",
        p,
    )
    e4 = one(
        "(APIServer pid=95673) INFO 07-20 18:11:49 [loggers.py:271] Engine 004: Avg prompt throughput: 0.1 tokens/s, "
        "Avg generation throughput: 45.0 tokens/s, Running: 2 reqs, Waiting: 3 reqs, GPU KV cache usage: 10.1%, "
        "Prefix cache hit rate: 0.0%",
        p,
    )
    assert isinstance(e2, EngineStats) and e2.engine == 2 and e4.waiting_req == 3
    spec = (
        "(APIServer pid={pid}) INFO 07-20 18:11:49 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.87, "
        "Accepted: 282 tokens, Drafted: 453 tokens, Per-position acceptance rate: 0.821, 0.609, 0.437, "
        "Avg Draft acceptance rate: 62.3%"
    )
    b = rec(spec.format(pid=95673), p)
    a = rec(spec.format(pid=95669), p)
    assert (a.rank, a.throughput, a.running_req) == ("engine 2", 43.3, 1)
    assert (b.rank, b.throughput, b.running_req) == ("engine 4", 45.0, 2)
    c = rec(spec.format(pid=95669), p)  # no Engine line before it: the engine is unknown
    assert c.rank is None


# §5.9 prefixes and decorations; §5.10 ANSI ---------------------------------------------------------
BODY = "Decode batch, #running-req: 5, #token: 10, token usage: 0.01, accept len: 2.50, accept rate: 0.75, cuda graph: True"


@pytest.mark.parametrize(
    "line",
    [
        f"[2026-01-01 00:00:00 TP0] {BODY}",
        f"sever logs: [2026-01-01 00:00:00 TP0] {BODY}",
        f"> [2026-01-01 00:00:00 TP0] {BODY}",
        f"> > [2026-01-01 00:00:00 TP0] {BODY}",
        f"`[2026-01-01 00:00:00 TP0] {BODY}`",
        f"**[2026-01-01 00:00:00 TP0]** {BODY}",
        f"\x1b[1;36m[2026-01-01 00:00:00 TP0]\x1b[0m {BODY}",
        f"\ufffd[1;36m[2026-01-01 00:00:00 TP0]\ufffd[0m {BODY}",
        f"2026-01-01T00:00:00.123456789Z [2026-01-01 00:00:00 TP0] {BODY}",
        f"2025-12-04 20:35:53 INFO 151972 [scheduler_metrics_mixin.py:287] {BODY}",
        BODY,
    ],
)
def test_prefix_variants(line):
    r = rec(line)
    assert (r.accept_len, r.accept_rate, r.running_req) == (2.5, 0.75, 5)


def test_vllm_prefix_variants_and_ansi_process_tag():
    for line in [
        "INFO 05-19 10:30:33 metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.00, Accepted: 1 tokens, Drafted: 2 tokens",
        "\x1b[1;36m(EngineCore_DP0 pid=996225)\x1b[0;0m INFO 05-19 10:30:33 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.00, Accepted: 1 tokens, Drafted: 2 tokens",
        "SpecDecoding metrics: Mean acceptance length: 2.00, Accepted: 1 tokens, Drafted: 2 tokens",
    ]:
        r = rec(line)
        assert r.accept_len == 2.0 and r.accepted == 1
    assert (
        rec(
            "\ufffd[1;36m(EngineCore_DP0 pid=996225)\ufffd[0;0m INFO 05-19 10:30:33 [metrics.py:101] SpecDecoding "
            "metrics: Mean acceptance length: 2.00, Accepted: 1 tokens, Drafted: 2 tokens"
        ).process
        == "EngineCore_DP0 pid=996225"
    )


# §5.11 wrapped and clipped lines -----------------------------------------------------------------
def test_hard_wrapped_server_args_are_joined():
    p = LineParser("t")
    m1 = one(
        "[2025-11-06 01:22:00] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', "
        "speculative_num_ste",
        p,
    )
    m2 = one(
        "ps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4, speculative_draft_model_path='/d/e3', max_total_token",
        p,
    )
    m3 = one("s=None, tp_size=2)", p)
    assert isinstance(m1, Marker) and not m1.continuation
    assert isinstance(m3, Marker) and m3.continuation
    st = SourceStats("t")
    st.feed([m1, m2, m3])
    cfg = st.current.config
    assert (cfg.algorithm, cfg.num_steps, cfg.topk, cfg.num_draft_tokens, cfg.tp_size) == (
        "EAGLE3",
        3,
        1,
        4,
        2,
    )
    assert cfg.draft_model_path == "/d/e3"
    # After the closing parenthesis, lines are read normally again.
    assert isinstance(one(f"[2026-01-01 00:00:00 TP0] {BODY}", p), Record)


def test_clipped_decode_line_and_concatenated_tqdm():
    r = rec(
        "[2025-10-22 10:00:00 TP0] Decode batch. #running-req: 1, #token: 108, token usaccept rate: 0.32, "
        "cuda graph: True, gen throughput (token/s): 3.1, #queue-req"
    )
    assert r.accept_rate == 0.32 and r.extra["clipped_key"] == "token usaccept rate"
    assert (
        one(
            "Capturing batches (bs=1 avail_mem=11.18 GB): 100%|████| 5/5 [00:01<00:00]Capturing batches (bs=2): 20%|█"
        )
        is None
    )


def test_malformed_lookalikes_are_counted_with_a_reason():
    m = one("[2026-01-01 00:00:00 TP0] Decode batch, #running-req: many, accept len: 2.00")
    assert isinstance(m, Malformed) and "#running-req" in m.reason
    m = one("[2026-01-01 00:00:00 TP0] Decode batch, ")
    assert isinstance(m, Malformed)
    m = one("SpecDecoding metrics: Mean acceptance length: 2..5, Accepted: 3 tokens")
    assert isinstance(m, Malformed)


# §5.12 timestamps ----------------------------------------------------------------------------------
def test_vllm_year_roll_over_and_time_only_days():
    r = TimestampReader(year=2025)
    dec = r.read("INFO 12-31 23:59:59 [x.py:1] a")
    jan = r.read("INFO 01-01 00:00:01 [x.py:1] b")
    assert jan - dec == 2.0
    t = TimestampReader()
    a = t.read("[23:59:58 TP0] Decode batch. x")
    b = t.read("[00:00:03 TP0] Decode batch. x")
    assert b - a == 5.0
    # llama.cpp's prefix is time since start, not a date: no timestamp, an elapsed time
    assert TimestampReader().read("0.06.895.980 I slot print_timing: ...") is None
    assert TimestampReader.elapsed("0.06.895.980 I slot print_timing: ...") == pytest.approx(6.89598)
    assert TimestampReader().read(
        "2026-05-12T07:51:39.301802920Z (APIServer pid=1) INFO 05-12 07:51:39 x"
    ) % 60 == pytest.approx(39.301802920)


# §5.13 restarts open segments ----------------------------------------------------------------------
def test_restart_markers_open_segments_and_merge_within_one_startup():
    p = LineParser("t")
    st = SourceStats("t")
    lines = [
        "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4)",
        "[2026-01-01 00:00:05] INFO:     Started server process [11]",
        "[2026-01-01 00:00:09] The server is fired up and ready to roll!",
        f"[2026-01-01 00:01:00 TP0] {BODY}",
        f"[2026-01-01 00:01:01 TP0] {BODY}",
        "[2026-01-01 00:10:00] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', speculative_num_steps=5, speculative_eagle_topk=1, speculative_num_draft_tokens=6)",
        "[2026-01-01 00:10:09] The server is fired up and ready to roll!",
        f"[2026-01-01 00:11:00 TP0] {BODY}",
    ]
    for i, line in enumerate(lines, 1):
        it = p.feed(line, i, 0)
        if it is not None:
            st.feed([it])
    segs = list(st.segments)
    assert [s.records for s in segs] == [2, 1]
    assert [s.reason for s in segs] == ["server_args", "server_args"]
    assert segs[0].config.label() == "EAGLE3 steps=3 topk=1 ndt=4"
    assert segs[1].config.effective_num_draft_tokens == 6


# §5.14 look-alikes; llama.cpp ------------------------------------------------------------------------
def test_lookalikes_are_not_records():
    # a Finish: line is one request (issue 12): a record of its own kind, never an interval one
    fin = one(
        "[2025-10-02 23:42:16] Finish: obj=GenerateReqInput(rid='x'), out={'meta_info': {'spec_accept_rate': 0.5, 'spec_accept_length': 2.1}}"
    )
    assert isinstance(fin, Record) and fin.kind == "request" and fin.accept_len == 2.1
    for line in [
        "[DEBUG] prefill batch: ['5501e53c58974e86bc717219b0a6315c']",
        "Accept length: 5.86",
        "Acceptance length (server): 3.09",
        "=== Last 3 SpecDecoding metrics ===",
        "we saw Decode batch lines go missing",
    ]:
        assert not isinstance(one(line), (Record, Malformed)), line
    jax = rec(
        "[2025-12-17 05:10:47] Decode batch. #running-req: 1, #token: 64, token usage: 0.00, "
        "gen throughput (token/s): 84.39, #queue-req: 0, #cache_miss: 1"
    )
    assert jax.accept_len is None and jax.extra["#cache_miss"] == "1"


def test_llamacpp_timing_lines():
    r = rec(
        "0.06.895.980 I slot print_timing: id  1 | task 0 | draft acceptance = 0.64479 (  167 accepted /   259 "
        "generated), mean acceptance length =  2.92, acceptance rate per position = (0.805, 0.632, 0.483)"
    )
    assert (r.family, r.accept_rate, r.accepted, r.drafted, r.accept_len) == (
        "llamacpp",
        0.64479,
        167,
        259,
        2.92,
    )
    assert r.per_position == (0.805, 0.632, 0.483) and r.extra["slot"] == "1"
    old = rec(
        "slot print_timing: id  0 | task 3 | draft acceptance rate = 0.50000 (   10 accepted /    20 generated)"
    )
    assert old.accept_rate == 0.5 and old.accept_len is None


# §5.15 semantics: stuck at 1.00 ----------------------------------------------------------------------
def test_accept_len_stuck_at_one_is_flagged():
    p = LineParser("t")
    st = SourceStats("t")
    st.feed(
        [
            p.feed(
                "[2026-01-01 00:00:00] server_args=ServerArgs(speculative_algorithm='EAGLE', "
                "speculative_draft_model_path='/m/eagle3')",
                1,
                0,
            )
        ]
    )
    for i in range(40):
        st.feed(
            [
                p.feed(
                    f"[2026-01-01 00:01:{i:02d} TP0] Decode batch, #running-req: 4, accept len: 1.00, "
                    f"accept rate: 0.00, cuda graph: True",
                    i + 2,
                    0,
                )
            ]
        )
    codes = [d["code"] for d in st.current.diagnostics()]
    assert "accept_len_stuck_at_1" in codes
    assert "with a draft model configured" in st.current.diagnostics()[0]["message"]


def test_parser_never_raises_on_odd_text():
    p = LineParser("t")
    for line in [
        "",
        "\x00" * 10,
        "Decode batch" * 1000,
        "] Decode batch, : , : ,",
        "SpecDecoding metrics:",
        "SpecDecoding metrics: Per-position acceptance rate: , , ,",
        "server_args=" + "(" * 5000,
        "'speculative_x': " * 100,
        "draft acceptance = x (1 accepted / 2 generated)",
    ]:
        item = p.feed(line, 1, 0)  # feed turns a crash into Malformed("parser error: ..."): look
        if isinstance(item, Malformed):
            assert not item.reason.startswith("parser error"), (line[:80], item.reason)


def test_record_dict_is_the_validated_model():
    from tui.core.model.record_model import RecordModel

    for line in (
        NEW,
        "0.06.895.980 I slot print_timing: id  1 | task 0 | draft acceptance = 0.64479 (  167 "
        "accepted /   259 generated), mean acceptance length =  2.92, acceptance rate per position = (0.8, 0.6)",
    ):
        r = rec(line)
        assert RecordModel(**r.as_dict()).model_dump(mode="json") == r.as_dict()
