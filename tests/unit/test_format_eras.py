"""Eras decided by evidence, restarts, and every printed number kept (issue 22 items 1-3): line by
line, on the line parser and the scanners. The lines follow the format strings quoted in
docs/formats.md ("Eras"), which cites each release's file and line."""

from __future__ import annotations

import pytest

from tui.core.formats import LineParser
from tui.core.formats.fastscan import refused_at, scan_chunk
from tui.core.formats.markers import MAX_LITERAL, parse_server_args
from tui.core.model.records import RESTART, Marker, Record
from tui.core.stats import SourceStats

V1 = (
    "INFO 05-01 10:00:10 [metrics.py:82] SpecDecoding metrics: Draft acceptance rate: {r}%, Mean acceptance "
    "length: {al}, Accepted: {a} tokens, Drafted: {d} tokens, Per-position acceptance rate: {pp}"
)


def items(lines: list[str]) -> list:
    p = LineParser("t", year=2026, ref_time=None)
    return [x for i, line in enumerate(lines) if (x := p.feed(line, i + 1, 0)) is not None]


def _log(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def _summary(buf: bytes, tmp_path, name: str = "v.log") -> dict:
    from tui.core.pipeline.whole import summarize_file

    path = tmp_path / name
    path.write_bytes(buf)
    return summarize_file(str(path), name, workers=1).result()


def _spec(al: float, pp: tuple[float, ...], s: int = 10) -> str:
    # a line of vLLM 0.8.5's format (v1/spec_decode/metrics.py:82): the rate is accepted / drafted
    return V1.format(r="22.3", al=f"{al:.2f}", a=201, d=900, pp=", ".join(f"{x:.3f}" for x in pp)).replace(
        "10:00:10", f"10:00:{s:02d}"
    )


def test_vllm_before_0_9_gets_the_bonus_token_from_its_segments_evidence(scanner, tmp_path):
    # vLLM 0.8.5: accepted / drafts = 0.67, the sum of its list; 0.9.0 on: 1.67 for the same counts
    old = [_spec(0.67, (0.4, 0.2, 0.07), s) for s in range(12)]
    new = [_spec(1.67, (0.4, 0.2, 0.07), s) for s in range(12)]
    for lines, printed in ((old, 0.67), (new, 1.67)):
        d = _summary(_log(lines), tmp_path)
        (seg,) = d["segments"]
        assert seg["accept_len"]["mean"] == pytest.approx(1.67), printed
        assert ("no bonus token" in (seg["rate_definition"].get("note") or "")) == (printed < 1)
        assert not [x for x in seg["diagnostics"] if x["code"] == "era_disagreement"]
    # every line is read fast, whatever its era: the scanners say each line's evidence
    sc = scan_chunk(_log([old[0], new[0]]), 2026)
    assert sc is not None and list(sc.runs[0].values["sum_match"]) == [1.0, 0.0]
    assert refused_at(_log([new[0], old[0], new[0]]), 2026) == -1 or scanner != "native"


def test_one_line_never_decides_an_era(tmp_path):
    # a log of 0.11 (1 + the sum) where one line's numbers happen to add up the old way, and a
    # fork whose per-position rates never add up: the printed values are kept, the odd lines
    # counted; the line parser (one line at a time) and the scanners agree
    new = [_spec(1.67, (0.4, 0.2, 0.07), s) for s in range(30)]
    new[3] = _spec(1.2, (0.6, 0.4, 0.2), 3)  # 1.20 = 0.6 + 0.4 + 0.2: the old era's evidence
    fork = [_spec(2.25, (0.4, 0.2, 0.07 + 0.001 * (s % 5)), s) for s in range(30)]
    fork[0] = _spec(1.2, (0.6, 0.4, 0.2), 0)  # by chance, and first
    for lines, want, off in ((new, (29 * 1.67 + 1.2) / 30, 1), (fork, (29 * 2.25 + 1.2) / 30, 30)):
        d = _summary(_log(lines), tmp_path)
        (seg,) = d["segments"]
        assert seg["accept_len"]["mean"] == pytest.approx(want, abs=1e-9)
        assert "no bonus token" not in (seg["rate_definition"].get("note") or "")
        (era,) = [x for x in seg["diagnostics"] if x["code"] == "era_disagreement"]
        assert era["disagreeing"] == off and era["lines"] == 30 and era["era"] == "V1"
        assert f"{off:,} of 30 lines disagree" in era["message"]
        st = SourceStats("t")
        st.feed(items(lines))  # line by line, as a live source reads them
        assert st.to_dict()["segments"][0]["accept_len"]["mean"] == pytest.approx(want, abs=1e-9)


def test_the_version_line_decides_the_era_and_a_restart_may_change_it(tmp_path):
    # 0.8.5 then 0.11 in one log: each run on its own scale, by its version line, however its
    # numbers look (a fork of 0.8.5 whose lists add up the new way keeps its version's era)
    head = "INFO 05-01 09:59:00 [api_server.py:1090] vLLM API server version {v}"
    lines = [head.format(v="0.8.5")] + [_spec(1.67, (0.4, 0.2, 0.07), s) for s in range(12)]
    lines += [head.format(v="0.11.0")] + [_spec(1.67, (0.4, 0.2, 0.07), s) for s in range(12)]
    d = _summary(_log(lines), tmp_path)
    a, b = d["segments"]
    assert a["accept_len"]["mean"] == pytest.approx(2.67) and b["accept_len"]["mean"] == pytest.approx(1.67)
    assert "no bonus token" in a["rate_definition"]["note"]
    (era,) = [x for x in a["diagnostics"] if x["code"] == "era_disagreement"]
    assert era["decided_by"] == "version 0.8.5" and era["disagreeing"] == 12
    assert not [x for x in b["diagnostics"] if x["code"] == "era_disagreement"]


def test_a_live_source_reads_its_first_lines_under_the_newest_era_until_settled():
    # one line at a time: no line moves a segment off the newest era before ten lines are in; a
    # log of vLLM 0.8.5 without its version line is then read on its own scale, and the lines
    # read before are counted (a warning), never hidden
    fork = [_spec(1.2, (0.6, 0.4, 0.2), 0)] + [_spec(2.25, (0.4, 0.2, 0.071), s) for s in range(1, 12)]
    old = [_spec(1.2, (0.6, 0.4, 0.2), s) for s in range(12)]
    for lines, want, early in ((fork, (1.2 + 11 * 2.25) / 12, 0), (old, (9 * 1.2 + 3 * 2.2) / 12, 9)):
        st = SourceStats("t")
        for it in items(lines):
            st.feed([it])
        seg = st.to_dict()["segments"][0]
        (era,) = [x for x in seg["diagnostics"] if x["code"] == "era_disagreement"]
        assert era["read_before_settled"] == early
        assert era["era"] == ("V1" if lines is fork else "V1 before 0.9")
        assert seg["accept_len"]["mean"] == pytest.approx(want)
        bulk = SourceStats("t")
        bulk.feed(items(lines))  # the same lines at once: settled by all of them
        assert bulk.to_dict()["segments"][0]["accept_len"]["mean"] == pytest.approx(
            (1.2 + 11 * 2.25) / 12 if lines is fork else 2.2
        )


@pytest.mark.parametrize("chunk", [4 << 20, 64 << 10, 20 << 10, 8 << 10])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_whole_read_decides_each_segments_era_on_its_lines_wherever_the_chunks_end(
    chunk, workers, tmp_path, monkeypatch
):
    """A log of vLLM 0.8.5 with no version line, restarted now and then: a segment that starts a
    few lines before a chunk ends is read under the era of all its lines (held back until
    settled), not its first lines under the newest era. Before, 8 of them were: 4 values
    refused, the mean off by 0.002, and the answer differed between one thread and two."""
    import tui.core.pipeline.ranges as ranges
    import tui.core.pipeline.whole as whole

    monkeypatch.setattr(whole, "PARALLEL_MIN", 0)
    monkeypatch.setattr(ranges, "MAX_RANGE", 0)
    monkeypatch.setattr(whole, "CHUNK", chunk)
    start = "INFO 05-01 09:59:00 [api_server.py:1] non-default args: {'model': 'x'}"
    per = [(0.4, 0.2, 0.07), (0.5, 0.3, 0.1), (0.6, 0.4, 0.2)]
    lines, truth = [start], [[]]
    for i in range(2100):
        pp = per[i % 3]
        lines.append(_spec(sum(pp), pp, i % 60))
        truth[-1].append(1 + sum(pp))
        lines += ['INFO:     10.0.0.1:5000 - "POST /v1/completions HTTP/1.1" 200 OK'] * (i * 7 % 31)
        if i in (699, 1399, 2094):  # the last segment: 5 lines, fewer than settle an era
            lines.append(start)
            truth.append([])
    path = tmp_path / "v.log"
    path.write_bytes(_log(lines))
    d = whole.summarize_file(str(path), "v", workers=workers).result()
    assert [s["accept_len"]["n"] for s in d["segments"]] == [len(t) for t in truth] == [700, 700, 695, 5]
    for seg, t in zip(d["segments"], truth):
        assert seg["accept_len"]["mean"] == pytest.approx(sum(t) / len(t), abs=1e-9)
        assert "no bonus token" in seg["rate_definition"]["note"]
        assert not [x for x in seg["diagnostics"] if x["code"] == "era_disagreement"]


def test_a_whole_read_holds_a_bounded_number_of_records_for_an_era(monkeypatch):
    """Runs wait for their segment's era at most ``HOLD_MAX`` records: then the era is decided on
    what was seen and they go in (memory stays bounded on a segment of few evidence lines)."""
    import tui.core.stats.eras as eras

    monkeypatch.setattr(eras, "HOLD_MAX", 5)
    st = SourceStats("t")
    st.hold_eras = True
    old = items([_spec(0.67, (0.4, 0.2, 0.07), s) for s in range(8)])
    for i, it in enumerate(old[:6]):
        st.feed([it])
        assert (st.held is None) == (i == 5) and st.records == (6 if i == 5 else 0)
    st.feed(old[6:])
    seg = st.to_dict()["segments"][0]
    assert seg["records"] == 8 and seg["accept_len"]["mean"] == pytest.approx(1.67)


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
