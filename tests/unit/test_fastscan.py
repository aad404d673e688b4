"""The whole-buffer fast path must give exactly what the line parser gives."""

from __future__ import annotations

import io
import random
from array import array
from pathlib import Path

import pytest
from _native_util import require_native

from tui.core.formats import grammar
from tui.core.formats.fastscan import scan_chunk
from tui.core.model.columns import RecordColumns
from tui.core.pipeline.whole import Summarizer, iter_chunks, summarize_file


def decode_line(rng: random.Random, ts: str, tag: str, variant: int = 0) -> str:
    al = rng.uniform(1.0, 4.0)
    sep = "," if variant % 2 == 0 else "."
    tail = ", " if variant % 3 == 0 else ""
    graph = rng.choice(["cuda", "npu"])
    return (
        f"[{ts}{tag}] Decode batch{sep} #running-req: {rng.randint(1, 64)}, #token: {rng.randint(1, 99999)}, "
        f"token usage: {rng.random():.2f}, accept len: {al:.2f}, accept rate: {(al - 1) / 3:.2f}, {graph} graph: "
        f"{rng.choice(['True', 'False'])}, gen throughput (token/s): {rng.uniform(1, 3000):.2f}, "
        f"#queue-req: {rng.randint(0, 9)}{tail}"
    )


def make_log(seed: int, n: int, odd_every: int = 0, tags=(" TP0",)) -> bytes:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        ts = f"2026-05-{1 + i // 86400 % 28:02d} {i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}"
        r = rng.random()
        if odd_every and i % odd_every == odd_every - 1:
            out.append(rng.choice(ODD).replace("TS", ts))
        elif r < 0.8:
            out.append(decode_line(rng, ts, rng.choice(tags), i))
        elif r < 0.9:
            out.append(
                f"[{ts}] Prefill batch, #new-seq: 1, #new-token: 9, #cached-token: 0, token usage: 0.01, "
                f"#running-req: 3, #queue-req: 0"
            )
        else:
            out.append(
                f'[{ts}] INFO:     127.0.0.1:{rng.randint(1000, 9999)} - "POST /generate HTTP/1.1" 200 OK'
            )
    return ("\n".join(out) + "\n").encode()


# Lines that must send a chunk to the line parser (or that the parser reads differently).
ODD = [
    "[TS] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4)",
    "[TS] The server is fired up and ready to roll!",
    "[TS TP0] Decode batch, #running-req: 3, #token: 9, token usage: 0.01, cuda graph: True, gen throughput (token/s): 3.00, #queue-req: 0",
    "[TS TP0] Decode batch, #running-req: x, accept len: 2.00",
    "> [TS TP0] Decode batch, #running-req: 3, #token: 9, token usage: 0.01, accept len: 2.00, accept rate: 0.33, cuda graph: True, gen throughput (token/s): 3.00, #queue-req: 0`",
    "[TS DP1 TP1] Decode batch, #running-req: 3, #token: 9, token usage: 0.01, accept len: 3.00, accept rate: 0.67, cuda graph: True, gen throughput (token/s): 3.00, #queue-req: 0",
    "sever logs: [TS TP0] Decode batch, #running-req: 3, #token: 9, token usage: 0.01, accept len: 2.50, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 3.00, #queue-req: 0",
    "(APIServer pid=1) INFO 05-15 13:53:53 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.81, Accepted: 472 tokens, Drafted: 783 tokens, Per-position acceptance rate: 0.839, 0.605, 0.364, Avg Draft acceptance rate: 60.3%",
    "\x1b[1;36m[TS TP0] Decode batch, #running-req: 3, #token: 9, token usage: 0.01, accept len: 2.25, accept rate: 0.42, cuda graph: True, gen throughput (token/s): 3.00, #queue-req: 0",
]


# The ODD lines the grammar's shapes take (the scanners read them; the others need the parser).
READ_FAST = {ODD[2], ODD[5]}


def odd_lines_in(data: bytes) -> list[str]:
    import re

    text = data.decode()
    ts = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"
    return [o for o in ODD if re.search("^" + re.escape(o).replace("TS", ts) + "$", text, re.M)]


def slow_result(data: bytes) -> dict:
    s = Summarizer("x")
    for off, buf in iter_chunks(io.BytesIO(data), 1 << 16):
        s.feed(buf, off, None)
    return s.result()


def fast_result(data: bytes, chunk: int = 1 << 16) -> tuple[dict, Summarizer]:
    s = Summarizer("x")
    for off, buf in iter_chunks(io.BytesIO(data), chunk):
        s.feed(buf, off, scan_chunk(buf, s.year) if s.can_fast else None)
    return s.result(), s


def same(a: dict, b: dict) -> None:
    """Equal up to float summation order (1e-9 relative)."""
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-9, abs=1e-12)
    else:
        assert a == b


@pytest.fixture(params=["native", "python"])
def scanner(request, monkeypatch):
    """Both scanners: the optional C one (when built) and the pure-Python reference."""
    import tui.core.formats.fastscan as fastscan

    if request.param == "python":
        monkeypatch.setattr(fastscan, "_native", None)
    elif fastscan._native is None:
        require_native("the native scanner")
    return request.param


@pytest.mark.parametrize(
    "seed,odd_every,tags",
    [
        (1, 0, (" TP0",)),
        (2, 0, ("",)),
        (3, 0, (" DP0 TP0", " DP1 TP1", " DP2 TP2")),
        (4, 0, (" TP0 EP0",)),
        (5, 997, (" TP0",)),
        (6, 211, (" TP0",)),
        (7, 4999, ("",)),
    ],
)
def test_fast_equals_slow(seed, odd_every, tags, scanner):
    data = make_log(seed, 12000, odd_every, tags)
    fast, s = fast_result(data)
    same(fast, slow_result(data))
    if odd_every == 0:
        assert s.slow_chunks == 0 and s.fast_chunks > 5  # the fast path did run
    else:  # the line parser ran exactly when a line the grammar's shapes do not take was there
        assert (s.slow_chunks > 0) == any(o not in READ_FAST for o in odd_lines_in(data))


def test_fast_path_refuses_what_it_cannot_read(scanner):
    from tui.core.formats import LineParser

    p = LineParser("x")
    data = make_log(8, 200)
    assert scan_chunk(data) is not None
    for odd in ODD:
        line = odd.replace("TS", "2026-05-01 00:00:00").encode() + b"\n"
        if " DP1 TP1]" in odd:  # another rank tag in canonical form: read fast, per rank
            assert sorted(set(scan_chunk(data + line).runs[0].ranks)) == ["DP1 TP1", "TP0"]
        if odd in READ_FAST:  # in the grammar: read fast, as the line parser reads it
            sc = scan_chunk(data + line)
            assert sc is not None
            recs = [
                r
                for r in (p.feed(x, i + 1, 0) for i, x in enumerate((data + line).decode().splitlines()))
                if r
            ]
            assert sc.runs[0].same_values(RecordColumns.from_records(recs))
        else:
            assert scan_chunk(data + line) is None, odd


def test_parallel_workers_equal_one_process(tmp_path, monkeypatch, scanner):
    import tui.core.pipeline.ranges as summary_threads
    import tui.core.pipeline.whole as summary

    path = tmp_path / "big.log"
    path.write_bytes(
        make_log(9, 60000, 7001, (" TP0",)) + b"[2026-01-01 00:00:00 TP0] Decode batch, #running-req: 2"
    )
    monkeypatch.setattr(summary, "PARALLEL_MIN", 0)
    monkeypatch.setattr(summary_threads, "MAX_RANGE", 0)  # ranges of CHUNK bytes, however sparse
    monkeypatch.setattr(summary, "CHUNK", 1 << 18)
    one = summarize_file(str(path), workers=1).result()
    two = summarize_file(str(path), workers=2).result()
    same(one, two)
    assert one["lines"] == 60001  # the last line has no newline and still counts
    assert one == summarize_file(str(path), workers=1).result()


def test_over_long_lines_count_once_in_every_reader(tmp_path, monkeypatch, scanner):
    import tui.core.pipeline.ranges as summary_threads
    import tui.core.pipeline.whole as summary

    monkeypatch.setattr(summary, "PARALLEL_MIN", 0)

    monkeypatch.setattr(summary_threads, "MAX_RANGE", 0)  # ranges of CHUNK bytes, however sparse
    monkeypatch.setattr(summary, "CHUNK", 1 << 18)
    head = make_log(10, 3000)
    tail = make_log(11, 3000)
    path = tmp_path / "long.log"
    path.write_bytes(head + b"x" * (3 << 20) + b"\n" + tail)
    results = [summarize_file(str(path), workers=w).result() for w in (1, 2)]
    same(results[0], results[1])
    assert results[0]["lines"] == 6001
    expect = fast_result(head + tail)[0]
    assert results[0]["accept_len"]["n"] == expect["accept_len"]["n"]
    assert results[0]["accept_len"]["mean"] == pytest.approx(expect["accept_len"]["mean"])


def test_the_anchor_search_finds_the_lines_python_finds():
    """The native scanner's anchor search (a Wu-Manber skip loop) finds the lines holding an
    anchor that Python's own search finds, on generated logs, the sample and real logs, and noise
    that holds anchors and near misses at every offset."""
    import tui.core.formats.fastscan as fastscan

    if fastscan._native is None:
        require_native("the native scanner")
    rng = random.Random(11)
    anchors = [a.encode() for a in grammar.ANCHORS]
    noise = []
    for _ in range(400):
        a = rng.choice(anchors)
        cut = a[: rng.randrange(1, len(a) + 1)]  # a whole anchor or a near miss
        pad = bytes(rng.choice(b"abcSDdp 'F#-:=(") for _ in range(rng.randrange(0, 40)))
        noise.append(pad + cut + pad[::-1] + b"\n")
    root = Path(__file__).parent.resolve().parent.parent
    texts = [make_log(1, 3000), make_log(3, 3000, 211, (" DP0 TP0", " DP1 TP1")), b"".join(noise)]
    texts += [p.read_bytes() for p in sorted((root / "sample_logs").glob("*.log"))]
    real = sorted((root / "tests" / "fixtures" / "real_logs").glob("*"))
    assert len(real) >= 20
    texts += [p.read_bytes() for p in real]
    for text in texts:
        text = text if text.endswith(b"\n") else text + b"\n"
        want = sorted({text.rfind(b"\n", 0, i) + 1 for a in anchors for i in _all(text, a)})
        starts = array("q")
        starts.frombytes(fastscan._native.anchor_lines(text))
        assert list(starts) == want
        assert list(fastscan.anchor_lines(text)) == want


def _all(text: bytes, a: bytes) -> list[int]:
    out, i = [], text.find(a)
    while i >= 0:
        out.append(i)
        i = text.find(a, i + 1)
    return out


def test_a_range_is_scanned_around_the_lines_the_scanner_cannot_read(tmp_path, monkeypatch, scanner):
    """A restart's args dump or a malformed line in a range: the lines before and after it are
    scanned, only that line goes to the line parser, and the answers are the line parser's."""
    import tui.core.pipeline.ranges as summary_threads
    import tui.core.pipeline.whole as summary

    before, after = make_log(21, 2000), make_log(22, 2000)
    odd = b"[2026-02-26 15:00:00] server_args=ServerArgs(model_path='m', speculative_num_steps=3)\n"
    data = before + odd + after
    parts = summary_threads.scan_parts(memoryview(data), 2026, 100)
    if scanner == "native":
        assert [(p.start, p.end, p.scan is not None) for p in parts] == [
            (100, 100 + len(before), True),
            (100 + len(before), 100 + len(before) + len(odd), False),
            (100 + len(before) + len(odd), 100 + len(data), True),
        ]
    assert parts[0].start == 100 and parts[-1].end == 100 + len(data)
    assert all(a.end == b.start for a, b in zip(parts, parts[1:]))
    many = b"".join(make_log(30 + i, 50) + odd for i in range(summary_threads.MAX_PARTS + 4))
    parts = summary_threads.scan_parts(memoryview(many), 2026, 0)
    assert len(parts) <= summary_threads.MAX_PARTS + 2 and parts[-1].scan is None  # the rest: line parser

    monkeypatch.setattr(summary, "PARALLEL_MIN", 0)
    monkeypatch.setattr(summary_threads, "MAX_RANGE", 0)
    monkeypatch.setattr(summary, "CHUNK", 1 << 16)
    path = tmp_path / "restart.log"
    path.write_bytes(data + many)
    one, two = (summarize_file(str(path), workers=w).result() for w in (1, 2))
    same(one, two)
    assert len(one["segments"]) == len(slow_result(data + many)["segments"]) > 1
