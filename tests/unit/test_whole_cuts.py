"""Where a whole read cuts a log into runs decides the last bits of some sums (a variance merged
run by run); so a log is cut the same way whoever reads it: one thread or several, the native
scanner or the Python one. A chunk holding a line the scanner cannot read (a config line, a
restart, a malformed line) is cut at that line (``fastscan.refused_at``), by the sequential reader
as by a scanning thread (``ranges.scan_parts``), and the Python scanner says where it stops as the
native one does."""

from __future__ import annotations

import json
import random

import pytest
from _native_util import require_native
from _scan_util import llama_log, make_log

import tui.core.formats.fastscan as fastscan
import tui.core.pipeline.ranges as ranges
import tui.core.pipeline.whole as whole
from tui.core.formats.fastscan_python import refused_python

START = "0.00.010.000 I system info: n_threads = 8 | AVX = 1"


def _log(seed: int) -> bytes:
    """llama.cpp lines after a start line (the line parser's), then SGLang lines with a config
    line or a malformed line now and then."""
    return (START + "\n").encode() + llama_log(seed, 2500) + make_log(seed, 2500, odd_every=701)


@pytest.mark.parametrize("chunk", [64 << 10, 24 << 10])
def test_one_thread_or_two_native_or_python_the_same_json(chunk, tmp_path, monkeypatch):
    if fastscan._native is None:
        require_native("the native scanner")
    monkeypatch.setattr(whole, "PARALLEL_MIN", 0)  # the ranges' path, on a small file
    monkeypatch.setattr(ranges, "MAX_RANGE", 0)
    monkeypatch.setattr(whole, "CHUNK", chunk)
    path = tmp_path / "x.log"
    path.write_bytes(_log(3) + _log(4))
    out = {}
    for scanner in ("native", "python"):
        if scanner == "python":
            monkeypatch.setattr(fastscan, "_native", None)
        for workers in (1, 2):
            d = whole.summarize_file(str(path), "x", workers=workers).result()
            out[scanner, workers] = json.dumps(d, sort_keys=True)
    first = out["native", 1]
    assert json.loads(first)["records"] > 2000
    for key, text in out.items():
        assert text == first, key


def test_a_sequential_read_cuts_a_refused_chunk_where_the_scanner_stops(tmp_path, monkeypatch):
    """The first line of a chunk is the line parser's: the rest of the chunk is one run, as a
    scanning thread makes it (before, the chunk was halved down to 16 KiB pieces: runs of 32, 63,
    128 ... records)."""
    from tui.core.pipeline import driver

    runs: list[int] = []
    add_run = driver.Driver.add_run

    def spy(self, rc, raws=None, reduced=None):
        runs.append(rc.n)
        return add_run(self, rc, raws, reduced)

    monkeypatch.setattr(driver.Driver, "add_run", spy)
    path = tmp_path / "x.log"
    path.write_bytes((START + "\n").encode() + llama_log(5, 6000))
    whole.summarize_file(str(path), "x", workers=1)
    assert len(runs) == 1 and runs[0] > 1000


@pytest.mark.parametrize("seed", range(40))
def test_the_python_scanner_stops_where_the_native_one_does(seed):
    if fastscan._native is None:
        require_native("the native scanner")
    rng = random.Random(seed)
    parts = [
        llama_log(seed, rng.randint(0, 300)),
        make_log(seed, rng.randint(0, 300), odd_every=rng.randint(0, 90)),
    ]
    if rng.random() < 0.5:
        parts.insert(rng.randint(0, 2), (START + "\n").encode())
    rng.shuffle(parts)
    buf = b"".join(parts)
    native = int(fastscan._native.scan(buf, 2026, True))
    assert refused_python(buf, 2026) == native
    if native > 0:  # the lines before it scan, with both
        assert fastscan.scan_chunk(buf[:native], 2026) is not None


@pytest.mark.parametrize("scanner_kind", ["native", "python"])
def test_the_python_scanner_reads_with_one_thread_the_native_one_with_many(
    scanner_kind, tmp_path, monkeypatch
):
    """The Python scanner holds the GIL: more threads would only hold more ranges in memory (a
    2M-line llama.cpp log: 79 MB and 7.3 s with two, 47 MB and 6.6 s with one). The cut, and so
    the answer, is the same either way (above)."""
    if scanner_kind == "native" and fastscan._native is None:
        require_native("the native scanner")
    if scanner_kind == "python":
        monkeypatch.setattr(fastscan, "_native", None)
    monkeypatch.setattr(whole, "PARALLEL_MIN", 0)
    monkeypatch.setattr(whole, "default_workers", lambda step: 4)
    started: list[int] = []
    real = whole.ScanThreads

    def spy(n, fd, year):
        started.append(n)
        return real(n, fd, year)

    monkeypatch.setattr(whole, "ScanThreads", spy)
    path = tmp_path / "x.log"
    path.write_bytes(_log(6))
    whole.summarize_file(str(path), "x")
    assert started == [4 if scanner_kind == "native" else 1]
