"""The newest releases' fields read one by one (issue 30): SGLang 0.5.23's per-request cap fields
and /metrics names, llama.cpp's LLAMA_TRACE step lines and its synthetic acceptance lines. The
key and metric names are as the 0.5.23 wheel writes them (``sglang/srt/managers/
tokenizer_manager.py`` meta_info keys, ``sglang/srt/observability/metrics_collector.py`` names);
the llama.cpp lines are ``server-context.cpp`` / ``common/speculative.cpp`` of llama-cpp-python
0.3.36 (docs/formats.md)."""

from __future__ import annotations

import json

import pytest

from tui.core.formats.parser import LineParser
from tui.core.formats.sglang.metrics import SglangMetrics
from tui.core.model.records import Record
from tui.core.sources.prom.counters import Scrape, ScrapeResult


def _finish(meta: str) -> str:
    return (
        "[2026-09-20 10:00:00] Finish: obj=GenerateReqInput(rid='r1', stream=True), "
        f"out={{'meta_info': {{'id': 'r1', 'prompt_tokens': 20, 'completion_tokens': 81, {meta}}}}}"
    )


def test_sglang_finish_cap_fields_as_printed():
    line = _finish(
        "'spec_accept_rate': 0.5, 'spec_accept_length': 2.7, 'spec_num_correct_drafts': 51, "
        "'spec_num_proposed_drafts': 90, 'spec_verify_ct': 30, 'spec_cap_length': 3.1, "
        "'spec_block_accept_length': 2.9, 'spec_correct_drafts_histogram': [9, 3, 18], "
        "'spec_cap_lens_histogram': [0, 0, 3, 21, 6]"
    )
    rec = LineParser("t", year=2026).feed(line, 1, 0)
    assert isinstance(rec, Record) and rec.kind == "request"
    assert rec.more == {"cap_len": 3.1, "block_accept_len": 2.9}  # printed, kept as printed
    assert rec.extra["cap_lens_histogram"] == "0,0,3,21,6" and "cap_len_from" not in rec.extra
    assert rec.accept_len == 2.7 and rec.accepted == 51  # the other fields as before
    assert rec.as_dict()["more"] == {"cap_len": 3.1, "block_accept_len": 2.9}


def test_sglang_finish_cap_length_from_its_histogram_when_not_printed():
    line = _finish(
        "'spec_accept_length': 2.7, 'spec_verify_ct': 30, 'spec_cap_lens_histogram': [0, 0, 3, 21, 6]"
    )
    rec = LineParser("t", year=2026).feed(line, 1, 0)
    assert isinstance(rec, Record)
    assert rec.more == {"cap_len": pytest.approx((2 * 3 + 3 * 21 + 4 * 6) / 30)}
    assert rec.extra["cap_len_from"] == "spec_cap_lens_histogram"
    bad = _finish("'spec_accept_length': 2.7, 'spec_verify_ct': 30, 'spec_cap_lens_histogram': [1, -2]")
    rec = LineParser("t", year=2026).feed(bad, 1, 0)
    assert isinstance(rec, Record) and rec.more is None  # not a histogram: nothing made of it


def test_sglang_decode_line_without_cap_fields_has_none():
    line = (
        "[2026-09-20 09:01:00 TP0] Decode batch, #running-req: 3, #token: 1000, token usage: 0.01, "
        "accept len: 2.50, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 100.00, #queue-req: 0"
    )
    rec = LineParser("t", year=2026).feed(line, 1, 0)
    assert isinstance(rec, Record) and rec.more is None and rec.accept_len == 2.5


def test_sglang_key_reader_keeps_block_accept_len_apart():
    # an extra key sends the line to the key-by-key reader: "block accept len" is never "accept len"
    line = (
        "[2026-09-20 09:01:00 TP0] Decode batch, #running-req: 3, #token: 1000, token usage: 0.01, "
        "accept len: 2.50, accept rate: 0.50, cap len: 3.20, block accept len: 2.90, "
        "dspark est: 1.0, cuda graph: True, gen throughput (token/s): 100.00, #queue-req: 0"
    )
    rec = LineParser("t", year=2026).feed(line, 1, 0)
    assert isinstance(rec, Record)
    assert rec.accept_len == 2.5 and rec.more == {"cap_len": 3.2, "block_accept_len": 2.9}
    assert "clipped_key" not in rec.extra and rec.extra["dspark est"] == "1.0"


def _scrape(first: bool) -> Scrape:
    return Scrape(ts=100.0, dt=None, restarted=False, first=first, res=ScrapeResult(), started={"sglang"})


def test_sglang_metrics_cap_gauges_and_verify_calls():
    labels = {"model_name": "m", "tp_rank": "0"}
    samples = [
        ("sglang:spec_accept_length", labels, 2.5, ""),
        ("sglang:spec_accept_rate", labels, 0.5, ""),
        ("sglang:gen_throughput", labels, 100.0, ""),
        ("sglang:spec_cap_length", labels, 3.2, ""),
        ("sglang:spec_block_accept_length", labels, 0.0, ""),  # 0: not in the cap-accept mode
        ("sglang:spec_verify_calls_total", labels, 1234.0, ""),
    ]
    reader = SglangMetrics("sglang")
    reader.feed(
        [
            (n, labels, v + 1, "") if n == "sglang:gen_throughput" else (n, labels, v, "")
            for n, _, v, _ in samples
        ],
        _scrape(True),
    )
    sc = _scrape(False)  # the first scrape is the baseline; a new interval makes a record
    reader.feed(samples, sc)
    recs = [d for d in map(json.loads, sc.res.lines) if "marker" not in d]
    (rec,) = recs
    assert rec["more"] == {"cap_len": 3.2}  # a 0 gauge is "none scheduled", never a value
    assert rec["extra"]["spec_verify_calls_total"] == "1234"


def _llama(lines: list[str]) -> list:
    p = LineParser("t", year=2026)
    return [it for it in (p.feed(line, i, 0) for i, line in enumerate(lines, 1)) if it is not None]


STEP = "0.01.000.{:03d} I slot  post_decode: id  {} | task 0 | accepted  {}/ 3 draft tokens"
TIMING = "0.01.100.000 I slot print_timing: id  {} | task 0 | draft acceptance = 0.55556 (    {} accepted /     9 generated), mean len =  2.67"


def test_llamacpp_trace_steps_give_the_request_its_step_histogram():
    lines = [STEP.format(i, 0, a) for i, a in enumerate((2, 0, 3))]
    lines.append(STEP.format(9, 1, 1))  # another slot's step: not this request's
    lines.append(
        "0.01.000.500 I slot  post_decode: id  0 | task 0 | accepted  1/ 3 draft tokens (restore checkpoint)"
    )
    lines.append(
        "0.01.000.600 D slot  post_decode: id  0 | task 0 | accepted 2/3 draft tokens, new n_tokens = 50"
    )
    items = _llama([*lines, TIMING.format(0, 5)])
    (rec,) = [r for r in items if isinstance(r, Record)]
    assert rec.step_histogram == (1, 0, 1, 1)  # the restore and debug forms repeat a step: not counted
    # steps that do not add up to the printed accepted count: a line is missing, no histogram
    items = _llama([STEP.format(0, 0, 2), TIMING.format(0, 5)])
    (rec,) = [r for r in items if isinstance(r, Record)]
    assert rec.step_histogram is None and "do not add up" in rec.extra["traced_steps"]


def test_llamacpp_synthetic_lines_mark_the_run_until_a_restart():
    on = "0.00.500.000 W spec common_specu: synthetic speculative acceptance is enabled for benchmarking; generated output is not valid"
    syn = "0.00.500.100 I spec common_specu: synthetic acceptance: n_max = 3, mean length = 2.500000, rates = [0.8, 0.5, 0.2]"
    build = (
        "0.00.010.000 I cmn  common_param: common_params_print_info: build 6300 (abc1234) with cc for x86_64"
    )
    items = _llama([build, on, syn, TIMING.format(0, 5), build, TIMING.format(0, 5)])
    marks = [it for it in items if not isinstance(it, Record) and it.kind == "synthetic"]
    assert len(marks) == 2 and all(m.continuation for m in marks)  # config, never a new segment
    assert "mean length = 2.500000" in marks[1].config["synthetic"]
    first, second = [r for r in items if isinstance(r, Record)]
    assert first.extra["synthetic"] == "true" and "synthetic" not in second.extra


def test_the_app_warns_of_a_synthetic_segment_once_and_never_compares_it():
    from pathlib import Path

    from tui.core.stats.segments import SourceStats
    from tui.panes.notices import segment_notices
    from tui.panes.pane_numbers import segment_verdict

    rel = Path(__file__).parent.parent / "fixtures" / "formats" / "releases" / "llamacpp-0.3.36-synthetic.log"
    lines = rel.read_text().splitlines()
    second = next(i for i, line in enumerate(lines) if i > 1 and "print_info: build " in line)
    st = SourceStats("t")
    st.feed(_llama(lines[:second]))
    said: set[tuple[int, int]] = set()
    (n,) = segment_notices(st, "syn", said, set())
    assert n.severity == "warning" and "SYNTHETIC" in n.title and "mean length = 2.500000" in n.message
    assert segment_notices(st, "syn", said, set()) == []  # said once
    st.feed(_llama(lines[second:]))  # the real run after the restart
    assert segment_verdict(st) is None  # one measured segment: the synthetic one is not
    assert segment_notices(st, "syn", said, set()) == []


def test_sglang_cap_lines_are_read_fast_and_the_same(scanner):
    """The scanners read 0.5.23's cap parts by the decode shape's columns: the same columns as
    the line parser's records (the fast path's contract), on the C kernel and the Python one."""
    from pathlib import Path

    from tui.core.formats import fastscan
    from tui.core.model.columns import RecordColumns

    rel = Path(__file__).parent.parent / "fixtures" / "formats" / "releases" / "sglang-0.5.23-dspark.log"
    decode = [line for line in rel.read_text().splitlines() if "Decode batch" in line]
    scan = fastscan.scan_chunk(("\n".join(decode) + "\n").encode(), year=2026)
    assert scan is not None  # read fast, not handed to the line parser
    (run,) = scan.runs
    parsed = [r for r in _lines(decode) if isinstance(r, Record)]
    assert run.col("cap_len").tolist() == [r.more["cap_len"] for r in parsed]
    assert run.col("block_accept_len").tolist() == [r.more["block_accept_len"] for r in parsed]
    assert RecordColumns.from_records(parsed).col("cap_len") == run.col("cap_len")


def _lines(lines: list[str]) -> list:
    p = LineParser("t", year=2026)
    return [p.feed(line, i, 0) for i, line in enumerate(lines, 1)]


def test_the_app_alerts_skip_a_synthetic_segments_points():
    from tui.core.alerts.engine import AlertEngine, parse_rule
    from tui.panes.history import Point
    from tui.screens.alerting import AppAlerts

    def pt(seq: int, seg: int) -> Point:
        return Point(seq, seq, float(seq), seg, None, 1.2, None, None, None)

    al = AppAlerts(AlertEngine([parse_rule("accept_len<2.0")], rearm=5.0), ["a"])
    assert al.poll([[pt(1, 0), pt(2, 0)]], [{0}]) == []  # segment 0 is synthetic: no rule sees it
    assert [a.state for a in al.poll([[pt(1, 0), pt(2, 0), pt(3, 1)]], [{0}])] == ["firing"]  # the real one
