"""One grammar, three readers: the line parser, the Python scanner and the C scanner must agree.

The contract (tui/core/model/columns.py): the columns a scanner builds from a buffer equal
``RecordColumns.from_records`` of the records the line parser builds from the same lines; and a
summary read with the fast path equals one read line by line. Checked on generated lines
(hypothesis: every field, odd numbers, every optional part), on every real and sample log, and on
the odd forms that used to differ (an unquoted ``server_args=``, ``non-default args: {}``).
"""

from __future__ import annotations

import io
import os
import random
from pathlib import Path

import pytest
from _hypothesis_util import examples
from _scan_util import (
    ODD_VLLM,
    PROC,
    decode_line,
    fast_result,
    llama_log,
    make_log,
    same,
    slow_result,
    vllm_log,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.core.formats import LineParser, grammar
from tui.core.formats import fastscan as fastscan_mod
from tui.core.formats.fastscan import scan_chunk
from tui.core.model.columns import RecordColumns
from tui.core.model.records import Record
from tui.core.pipeline.whole import Summarizer, iter_chunks, summarize_file

ROOT = Path(__file__).parent.resolve().parent.parent
LOGS = sorted((ROOT / "tests" / "fixtures" / "real_logs").glob("*.log")) + sorted(
    (ROOT / "sample_logs").glob("*.log")
)


def records_of(data: bytes, year: int = 2026) -> list[Record]:
    p = LineParser("x", year=year)
    out = []
    for i, line in enumerate(data.decode().split("\n")[:-1]):
        item = p.feed(line.removesuffix("\r"), i + 1, 0)
        if isinstance(item, Record):
            out.append(item)
    return out


def check_contract(data: bytes, year: int = 2026) -> bool:
    """scan_chunk == the line parser's records, when the scanner takes the buffer; True if taken."""
    sc = scan_chunk(data, year)
    if sc is None:
        return False
    recs = records_of(data, year)
    assert sc.lines == data.count(b"\n")
    got = [rc for rc in sc.runs if rc.n]
    if not recs:
        assert not got
        return True
    assert len(got) == 1
    want = RecordColumns.from_records(recs)
    assert got[0].same_values(want), (got[0], want)
    assert list(got[0].line_nos) == list(want.line_nos)
    assert got[0].rate_definition == want.rate_definition
    return True


# -- generated vLLM lines ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "seed,proc,engines", [(1, PROC, 1), (2, "", 1), (3, PROC, 3), (4, "(EngineCore_DP0 pid=9)", 2)]
)
def test_vllm_chunk_equals_line_parser(seed, proc, engines, scanner):
    data = vllm_log(seed, 3000, proc.strip(), engines)
    data = data[data.index(b"\n") + 1 :]  # without the version marker
    if not proc:
        data = data.replace(b" INFO ", b"INFO ").replace(b"\nINFO:", b"\nINFO:")
        data = b"\n".join(line.lstrip() for line in data.split(b"\n"))
    assert check_contract(data)


@pytest.mark.parametrize("seed,chunk", [(5, 1 << 12), (6, 1 << 14), (7, 1 << 16)])
def test_vllm_summary_fast_equals_slow(seed, chunk, scanner):
    """Engine lines pair with the spec line after them across chunk ends; segments open at the
    version marker; the year comes from the reference time."""
    data = vllm_log(seed, 6000, PROC, 2, ODD_VLLM)
    ref = 1778000000.0  # 2026-05-05
    slow = Summarizer("x", ref_time=ref)
    for off, buf in iter_chunks(io.BytesIO(data), chunk):
        slow.feed(buf, off, None)
    fast = Summarizer("x", ref_time=ref)
    for off, buf in iter_chunks(io.BytesIO(data), chunk):
        fast.feed(buf, off, scan_chunk(buf, fast.year) if fast.can_fast else None)
    same(fast.result(), slow.result())
    assert fast.fast_chunks > 5
    assert fast.result()["segments"][0]["first_record_time"].startswith("2026-05-01")


# -- the odd forms -----------------------------------------------------------------------------
ODD_MARKERS = [
    "[TS] server_args=ServerArgs(speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4)",
    f"{PROC} INFO 05-01 00:00:00 [utils.py:1] non-default args: {{}}",
]


@pytest.mark.parametrize("odd", ODD_MARKERS)
def test_unquoted_markers_open_a_segment_on_every_path(odd, scanner):
    head, tail = make_log(21, 3000), make_log(22, 3000)
    line = odd.replace("TS", "2026-05-01 00:00:00").encode() + b"\n"
    assert scan_chunk(head + line + tail) is None  # the marker needs the line parser
    data = head + line + tail
    fast, _ = fast_result(data, 1 << 15)
    slow = slow_result(data)
    same(fast, slow)
    assert len(fast["segments"]) == 2


# -- every anchor, and nothing else --------------------------------------------------------------
@settings(
    max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(
        st.text(alphabet=st.characters(blacklist_characters="\n\r", max_codepoint=0x2FF), max_size=80),
        max_size=30,
    )
)
def test_lines_without_an_anchor_yield_nothing(lines, scanner):
    lines = [ln for ln in lines if not any(a in ln for a in grammar.ANCHORS)]
    p = LineParser("x")
    assert all(p.feed(ln, i + 1, 0) is None for i, ln in enumerate(lines))
    data = ("".join(ln + "\n" for ln in lines)).encode()
    if data:
        sc = scan_chunk(data)
        assert sc is not None and sc.lines == len(lines) and not sc.runs


number = st.one_of(
    st.integers(0, 10**16).map(str),
    st.tuples(st.integers(0, 10**9), st.text("0123456789", min_size=1, max_size=9)).map(
        lambda t: f"{t[0]}.{t[1]}"
    ),
)


@settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(st.tuples(number, number, number, number, st.integers(1, 5)), min_size=1, max_size=8))
def test_numbers_read_alike(rows, scanner):
    """Any printed number (long, short, leading zeros, beyond 15 digits) is read as float() reads it,
    or the buffer goes to the line parser."""
    out = []
    for i, (a, b, c, d, k) in enumerate(rows):
        pp = ", ".join([c] * k)
        out.append(
            f"{PROC} INFO 05-0{1 + i % 9} 10:00:0{i % 10} [metrics.py:1] SpecDecoding metrics: Mean acceptance length: {a}, "
            f"Accepted: {b.split('.')[0]} tokens, Drafted: {d.split('.')[0]} tokens, Per-position acceptance rate: {pp}, "
            f"Avg Draft acceptance rate: {c}%"
        )
        out.append(
            f"[2026-05-01 00:00:0{i % 10} TP0] Decode batch, #running-req: {b.split('.')[0]}, #token: 1, token usage: {a}, "
            f"accept len: {c}, accept rate: {d}, cuda graph: True, gen throughput (token/s): {a}, #queue-req: 0"
        )
    vllm = ("\n".join(out[0::2]) + "\n").encode()
    sgl = ("\n".join(out[1::2]) + "\n").encode()
    for data in (vllm, sgl):
        check_contract(data)


# -- real and sample logs ------------------------------------------------------------------------
@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_real_logs_every_path(path, scanner, tmp_path, monkeypatch):
    data = path.read_bytes()
    if not data.endswith(b"\n"):
        data += b"\n"
    check_contract(data)
    for line in data.split(b"\n"):  # every line alone, and every canonical one read fast
        check_contract(line + b"\n")
    fast, _ = fast_result(data, 1 << 12)
    same(fast, slow_result(data))


def test_the_number_cases_are_read_fast(scanner):
    """The property test above must exercise the scanners, not only their refusals."""
    line = (
        f"{PROC} INFO 05-01 10:00:00 [metrics.py:1] SpecDecoding metrics: Mean acceptance length: 0007.50, "
        "Accepted: 000 tokens, Drafted: 12 tokens, Per-position acceptance rate: 0.1, 123456789.123456, "
        "Avg Draft acceptance rate: 99.99%\n"
    )
    assert check_contract(line.encode())
    # 17 digits: beyond what C converts exactly, so C declines and Python's float() reads it
    long = line.replace("0007.50", "1234567890123456.5").encode()
    assert check_contract(long)
    if scanner == "native":
        assert fastscan_mod._native.scan(long, 2026) is False


def test_sglang_generated_lines_every_variant(scanner):
    rng = random.Random(3)
    lines = [
        decode_line(rng, "2026-05-01 00:00:00", tag, v) for v in range(6) for tag in ("", " TP0", " DP1 TP1")
    ]
    assert check_contract(("\n".join(lines) + "\n").encode())


# -- true times ----------------------------------------------------------------------------------
LLAMA = (
    "0.16.519.195 I slot print_timing: id  1 | task 0 | draft acceptance = 0.64479 (  167 accepted /   259 "
    "generated), mean acceptance length =  2.92, acceptance rate per position = (0.805, 0.632, 0.483)\n"
    "1.02.003.400 I slot print_timing: id  1 | task 1 | draft acceptance = 0.5 (  1 accepted /   2 generated)\n"
)


def test_llamacpp_elapsed_time_is_not_a_date(tmp_path):
    p = LineParser("x")
    r = p.feed(LLAMA.splitlines()[0], 1, 0)
    assert isinstance(r, Record) and r.timestamp is None and r.elapsed == pytest.approx(16.519195)
    assert r.as_dict()["elapsed"] == pytest.approx(16.519195)
    f = tmp_path / "llama.log"
    f.write_text(LLAMA)
    d = summarize_file(str(f)).result()
    assert d["elapsed"] == {"first": "0:00:16.519", "last": "0:01:02.003"}
    assert d["segments"][0]["first_record_time"] is None  # never 1970-01-01
    from tui.cli.summary_text import render_source
    from tui.core.model.summary import Summary

    text = "\n".join(
        render_source(Summary.of([{**d, "segment_comparison": None, "warnings": []}], None).sources[0])
    )
    assert "elapsed      0:00:16.519 to 0:01:02.003 (since the server started)" in text
    assert "1970" not in text


def test_vllm_year_from_the_file_mtime(tmp_path, scanner):
    f = tmp_path / "v.log"
    f.write_bytes(vllm_log(8, 200))
    t2024 = 1717200000  # 2024-06-01
    os.utime(f, (t2024, t2024))
    d = summarize_file(str(f)).result()
    assert d["segments"][0]["first_record_time"].startswith("2024-05-01")
    no_ref = Summarizer("stdin")  # no reference time: no year, so no timestamp
    for off, buf in iter_chunks(io.BytesIO(f.read_bytes())):
        no_ref.feed(buf, off, scan_chunk(buf, no_ref.year))
    assert no_ref.result()["segments"][0]["first_record_time"] is None


# -- the line parser sees only anchor lines (and args-dump continuations) ------------------------
WRAPPED = (
    "[2026-05-01 00:00:00] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3',\n"
    "speculative_num_steps=3, speculative_eagle_topk=1,\n"
    "speculative_num_draft_tokens=4)\n"
)


@pytest.mark.parametrize("slice_size", [64, 300, 1 << 20])
def test_slow_path_reads_only_anchor_lines_with_the_same_result(slice_size, scanner, monkeypatch):
    """Summarizer's line-by-line path skips lines without an anchor unread; it must give what
    feeding every line to the line parser gives, args dumps wrapped over slice ends included."""
    import tui.core.pipeline.line_reading as line_reading
    from tui.core.stats import SourceStats

    monkeypatch.setattr(line_reading, "SLOW_SLICE", slice_size)
    data = (make_log(31, 400, 37) + WRAPPED.encode() + vllm_log(32, 400) + LLAMA.encode()) * 2
    every = LineParser("x", year=2026)
    st = SourceStats("x")
    for i, line in enumerate(data.decode().split("\n")[:-1]):
        item = every.feed(line, i + 1, 0)
        if item is not None:
            st.feed((item,))
    s = Summarizer("x")
    s.driver.parser = LineParser("x", year=2026)
    s._slow(data, 0)
    assert s.lines == s.parser.lines == data.count(b"\n")
    same(s.stats.to_dict(), st.to_dict())
    assert len(st.to_dict()["segments"]) > 3


@pytest.mark.parametrize("chunk", [1 << 10, 1 << 16])
def test_llamacpp_read_fast_as_the_line_parser_reads_it(chunk, scanner):
    data = llama_log(41, 3000)
    assert check_contract(data)
    fast, s = fast_result(data, chunk)
    same(fast, slow_result(data))
    assert s.fast_chunks > 0 and fast["elapsed"]["first"].startswith("0:00:0")


def test_workers_follow_the_cores_within_the_memory_budget(monkeypatch):
    import tui.core.pipeline.ranges as scan

    monkeypatch.setattr(scan, "_available_mb", lambda: 64_000.0)
    monkeypatch.setattr(scan.os, "sched_getaffinity", lambda pid: set(range(1)))
    assert scan.workers() == 1
    monkeypatch.setattr(scan.os, "sched_getaffinity", lambda pid: set(range(2)))
    assert scan.workers() == 2
    monkeypatch.setattr(scan.os, "sched_getaffinity", lambda pid: set(range(64)))
    many = scan.workers()  # no fixed cap: as many as the RSS budget holds
    assert (
        scan.MAIN_MB + many * scan.WORKER_MB
        <= scan.RSS_BUDGET_MB
        < scan.MAIN_MB + (many + 1) * scan.WORKER_MB
    )
    monkeypatch.setattr(scan, "RSS_BUDGET_MB", 10_000)
    assert scan.workers() == 64
    monkeypatch.setattr(scan, "_available_mb", lambda: 300.0)  # little memory free: fewer
    assert scan.workers() == int((300 / 2 - scan.MAIN_MB) // scan.WORKER_MB)
    # larger ranges (sparse logs) cost more per thread: fewer threads
    assert scan.workers(12 << 20) < scan.workers(4 << 20)


def test_sparse_logs_are_scanned_in_larger_ranges(tmp_path):
    """Folding costs per range: where lines holding an anchor are sparse, ranges are larger (up
    to MAX_RANGE), judged on the file's head alone; dense logs keep the base size."""
    import tui.core.pipeline.ranges as scan

    line = b"[2026-01-01 00:00:00 TP0] Decode batch, #running-req: 1, #token: 1, token usage: 0.01, "
    line += b"accept len: 2.00, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 1.00, #queue-req: 0\n"
    noise = b'INFO:     10.0.0.1:1 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
    dense, sparse = tmp_path / "dense.log", tmp_path / "sparse.log"
    dense.write_bytes(line * 25_000)  # 5 MB: more than RANGE_LINES anchored lines in its head
    sparse.write_bytes((line + noise * 30) * 2_000)
    base = scan.READ_CHUNK
    with open(dense, "rb") as f:
        assert scan.range_size(f, base) == base
    with open(sparse, "rb") as f:
        assert base < scan.range_size(f, base) <= scan.MAX_RANGE
