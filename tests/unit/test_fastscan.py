"""The whole-buffer fast path must give exactly what the line parser gives."""

from __future__ import annotations

import random
from array import array
from pathlib import Path

import pytest
from _native_util import require_native
from _scan_util import ODD, fast_result, make_log, same, slow_result

from tui.core.formats import grammar
from tui.core.formats.fastscan import scan_chunk
from tui.core.model.columns import RecordColumns
from tui.core.pipeline.whole import summarize_file

# The ODD lines the grammar's shapes take (the scanners read them; the others need the parser).
READ_FAST = {ODD[2], ODD[5]}


def odd_lines_in(data: bytes) -> list[str]:
    import re

    text = data.decode()
    ts = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"
    return [o for o in ODD if re.search("^" + re.escape(o).replace("TS", ts) + "$", text, re.M)]


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


def test_the_python_scanners_kept_seconds_stay_bounded_and_right(monkeypatch):
    """The Python scanner works a date clock's second out once and keeps it (STAMPS_KEPT at
    most, then starts again): with room for only two, a log of thousands of seconds still reads
    as the line parser reads it."""
    import tui.core.formats.fastscan as fastscan
    import tui.core.formats.fastscan_python as fastscan_python

    monkeypatch.setattr(fastscan, "_native", None)
    monkeypatch.setattr(fastscan_python, "STAMPS_KEPT", 2)
    for readers in fastscan_python._READERS.values():  # (filled by the tests before, with room for more)
        for rd in readers:
            rd.stamps.clear()
    data = make_log(9, 6000)
    fast, s = fast_result(data)
    same(fast, slow_result(data))
    assert s.fast_chunks > 5
    assert all(len(rd.stamps) <= 2 for readers in fastscan_python._READERS.values() for rd in readers)


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
        make_log(9, 15000, 1751, (" TP0",)) + b"[2026-01-01 00:00:00 TP0] Decode batch, #running-req: 2"
    )
    monkeypatch.setattr(summary, "PARALLEL_MIN", 0)
    monkeypatch.setattr(summary_threads, "MAX_RANGE", 0)  # ranges of CHUNK bytes, however sparse
    monkeypatch.setattr(summary, "CHUNK", 1 << 16)  # ~35 ranges, 8 odd lines (restarts) among them
    one = summarize_file(str(path), workers=1).result()
    two = summarize_file(str(path), workers=2).result()
    same(one, two)
    assert one["lines"] == 15001  # the last line has no newline and still counts
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
    """Every search of the native scanner (the portable Wu-Manber skip loop; on x86-64 the SSSE3
    and AVX2 filters in front of it, as far as this CPU has them) finds the lines holding an anchor
    that Python's own search finds, on generated logs, the sample and real logs, and noise that
    holds anchors and near misses at every offset."""
    import tui.core.formats.fastscan as fastscan

    if fastscan._native is None:
        require_native("the native scanner")
    chosen = fastscan._native.search()
    try:
        for mode in range(chosen + 1):
            fastscan._native.search(mode)
            _anchor_search_agrees(fastscan)
        with pytest.raises(ValueError):
            fastscan._native.search(3)  # no such search
    finally:
        fastscan._native.search(chosen)


def _anchor_search_agrees(fastscan) -> None:
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
