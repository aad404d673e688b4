"""Per-request acceptance (issue 12 item 1): SGLang Finish: lines, llama.cpp per-request lines,
the distribution in summary --json. The hand-written lines here are built from the upstream
format strings (held out: not the fixtures)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tui.core.formats.parser import LineParser
from tui.core.model.columns import RecordColumns
from tui.core.model.records import Record
from tui.core.stats.requests import RESERVOIR, RequestSet
from tui.core.stats.segments import SourceStats

FIX = Path(__file__).parent.parent / "fixtures" / "formats"


def stats_of(lines: list[str]) -> SourceStats:
    p = LineParser("t", year=2026)
    st = SourceStats("t")
    items = [p.feed(line, i, 0) for i, line in enumerate(lines, 1)]
    st.feed([it for it in items if it is not None])
    return st


def finish(meta: str, prefix: str = "[2026-05-01 10:00:00] ") -> str:
    return (
        f"{prefix}Finish: obj=GenerateReqInput(rid='r1', stream=True, log_metrics=True), "
        f"out={{'meta_info': {{'id': 'r1', 'finish_reason': {{'type': 'stop', 'matched': 2}}, {meta}}}}}"
    )


ISSUE_LINE = finish(
    "'prompt_tokens': 50, 'completion_tokens': 128, 'spec_accept_rate': 0.8166666666666667, "
    "'spec_accept_length': 4.2667, 'spec_accept_token_num': 98, 'spec_draft_token_num': 120, "
    "'spec_verify_ct': 30, 'spec_accept_histogram': [4, 0, 2, 2, 22], 'e2e_latency': 0.5"
)


def test_issue_acceptance_line():
    st = stats_of([ISSUE_LINE])
    r = st.to_dict()["requests"]
    assert r["n"] == 1
    assert r["accept_len"]["p50"] == pytest.approx(4.27, abs=0.005)
    assert r["step_histogram"] == [4, 0, 2, 2, 22]
    seg = st.to_dict()["segments"][0]
    assert seg["requests"]["n"] == 1
    # a request never enters the interval statistics
    assert st.records == 0 and st.to_dict()["accept_len"]["n"] == 0


def test_finish_record_fields_and_derivations():
    p = LineParser("t", year=2026)
    rec = p.feed(ISSUE_LINE, 1, 0)
    assert isinstance(rec, Record) and rec.kind == "request"
    assert (rec.accepted, rec.drafted, rec.num_drafts) == (98, 120, 30)
    assert rec.accept_len == 4.2667  # as printed
    assert rec.accept_len_derived == pytest.approx(1 + 98 / 30)  # from the histogram
    assert rec.extra["completion_tokens"] == "128"
    assert rec.timestamp is not None


def test_finish_key_eras_and_alias_counted_once():
    lines = [
        # 2025-10: rate, length, verify_ct only
        finish(
            "'completion_tokens': 90, 'spec_accept_rate': 0.5, 'spec_accept_length': 2.5, 'spec_verify_ct': 36"
        ),
        # 2026: canonical names plus the aliases: the canonical histogram read, once
        finish(
            "'completion_tokens': 70, 'spec_num_correct_drafts': 40, 'spec_num_proposed_drafts': 120, "
            "'spec_verify_ct': 40, 'spec_accepted_drafts': 40, 'spec_proposed_drafts': 120, "
            "'spec_correct_drafts_histogram': [20, 10, 0, 10], 'spec_accept_histogram': [20, 10, 0, 10]"
        ),
        # no spec keys: a one-token completion, not counted
        finish("'completion_tokens': 1, 'cached_tokens': 0"),
        # the request's record without out= (Receive) and a cut Finish line: nothing
        "[2026-05-01 10:00:01] Receive: obj=GenerateReqInput(rid='r9')",
        finish("'spec_verify_ct': 4, 'spec_accept_length': 2.0")[:-20],
    ]
    r = stats_of(lines).to_dict()["requests"]
    assert r["n"] == 2
    # the 2026 line prints no length: 1 + (10 + 2*0 + 3*10) / 40 = 2.0 from its histogram
    assert r["accept_len"]["mean"] == pytest.approx((2.5 + 2.0) / 2)
    assert r["step_histogram"] == [20, 10, 0, 10]


def test_finish_text_holding_meta_info_reads_the_last_one():
    line = (
        "[2026-05-01 10:00:00] Finish: obj=GenerateReqInput(text=\"'meta_info': {'spec_accept_length': 9.0}\"), "
        "out={'text': 'a } tricky { text', 'meta_info': {'spec_verify_ct': 10, 'spec_accept_length': 3.1}}"
    )
    r = stats_of([line]).to_dict()["requests"]
    assert r["n"] == 1 and r["accept_len"]["mean"] == 3.1


def test_no_request_lines_gives_null():
    st = stats_of(
        [
            "[2026-05-01 10:00:00 TP0] Decode batch, #running-req: 1, #token: 339, token usage: 0.00, "
            "accept len: 4.20, accept rate: 0.84, cuda graph: True, gen throughput (token/s): 208.61, #queue-req: 0"
        ]
    )
    d = st.to_dict()
    assert d["requests"] is None and d["segments"][0]["requests"] is None
    assert d["accept_len"]["n"] == 1


def test_requests_follow_segments():
    lines = [
        finish("'spec_verify_ct': 10, 'spec_accept_length': 2.0"),
        "[2026-05-01 10:00:09] The server is fired up and ready to roll!",
        finish("'spec_verify_ct': 10, 'spec_accept_length': 3.0"),
        finish("'spec_verify_ct': 10, 'spec_accept_length': 4.0"),
    ]
    d = stats_of(lines).to_dict()
    assert [s["requests"]["n"] for s in d["segments"]] == [1, 2]
    assert d["requests"]["n"] == 3


def test_llamacpp_per_request_forms_feed_the_distribution():
    lines = [
        # merged form (server-context.cpp print_timings: "..., mean len = %5.2f")
        "0.15.534.915 I slot print_timing: id  0 | task 0 | draft acceptance = 0.50000 (   50 accepted /   100 generated), mean len =  2.10",
        # Ollama passes the same line through with no prefix
        "slot print_timing: id  0 | task 3 | draft acceptance = 0.75000 (   75 accepted /   100 generated), mean len =  3.30",
        # the old form prints no length: it counts as an interval record only
        "draft acceptance rate = 0.50000 (   10 accepted /    20 generated)",
    ]
    d = stats_of(lines).to_dict()
    assert d["requests"]["n"] == 2
    assert d["requests"]["accept_len"]["mean"] == pytest.approx(2.7)
    assert d["accept_len"]["n"] == 2 and d["accept_len"]["mean"] == pytest.approx(2.7)


def test_requestset_bounded_and_percentiles():
    rs = RequestSet()
    vals = [1.0 + (i % 400) / 100 for i in range(3 * RESERVOIR)]
    for v in vals:
        rs.add(v)
    assert len(rs._sample) == RESERVOIR and rs.n == len(vals)
    assert rs.to_dict()["accept_len"]["mean"] == pytest.approx(sum(vals) / len(vals))
    assert sum(rs.histogram()[1]) == len(vals)
    small = RequestSet()
    for v in (1.0, 2.0, 3.0, 4.0, 5.0):
        small.add(v)
    assert small.percentiles() == pytest.approx({"p10": 1.4, "p50": 3.0, "p90": 4.6})
    for bad in (0.5, 70.0, math.nan):
        small.add(bad)
    assert small.n == 5 and small.refused == 3


def test_request_columns_keep_step_hist_through_slice():
    p = LineParser("t", year=2026)
    recs = [p.feed(ISSUE_LINE, i, 0) for i in (1, 2)]
    cols = RecordColumns.from_records([r for r in recs if isinstance(r, Record)])
    assert cols.step_hist == [(4, 0, 2, 2, 22)] * 2
    assert cols.slice(1, 2).step_hist == [(4, 0, 2, 2, 22)]
    assert cols.same_values(RecordColumns.from_records([r for r in recs if isinstance(r, Record)]))


def test_bins_edges_hold_printed_values():
    rs = RequestSet()
    for v in (2.2, 2.4, 4.25, 1.0, 65.0):
        rs.add(v)
    lo, counts = rs.histogram()
    assert lo == 1.0
    assert [round(1.0 + i * 0.05, 2) for i, c in enumerate(counts) if c] == [1.0, 2.2, 2.4, 4.25, 64.95]


def test_bulk_add_is_add_one_by_one_to_the_bit():
    """The bulk path of add_columns (no step histograms: llama.cpp) gives the state that add()
    value by value gives: the running sum, the bins, the refused count and the reservoir (the
    same draws from its generator), across several runs and past the reservoir's size."""
    import random

    r = random.Random(5)
    for _ in range(12):
        one, bulk = RequestSet(), RequestSet()
        for _ in range(r.randint(1, 5)):
            vals = [
                r.choice([math.nan, 0.5, 70.0, 65.0, 2.2, r.uniform(1, 10), round(r.uniform(1, 5), 2)])
                for _ in range(r.randint(0, 3 * RESERVOIR))
            ]
            for v in vals:
                if v == v:
                    one.add(v)
            bulk._add_many([v for v in vals if v == v])
        assert one._sample == bulk._sample and one.total == bulk.total
        assert list(one.bins) == list(bulk.bins) and (one.n, one.refused) == (bulk.n, bulk.refused)
        assert one.to_dict() == bulk.to_dict()
