"""How a scanning thread reads a range (:func:`ranges.scan_range`): into its own buffer, used
again for every range it reads. What was left in the buffer by a longer range before never
reaches a scan, and a system without ``preadv`` reads the same bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _scan_util import make_log

from tui.core.formats import fastscan
from tui.core.pipeline import ranges as R


def _shape(parts: list[R.Part]) -> list[tuple]:
    out = []
    for p in parts:
        runs = [] if p.scan is None else [(rc.n, list(rc.values["accept_len"])) for rc in p.scan.runs]
        out.append((p.start, p.end, None if p.scan is None else p.scan.lines, runs))
    return out


@pytest.mark.parametrize("preadv", [True, False])
def test_a_thread_buffer_used_again_reads_what_a_fresh_one_reads(tmp_path: Path, monkeypatch, preadv) -> None:
    if not preadv:
        monkeypatch.delattr(os, "preadv", raising=False)
    data = make_log(5, 3000) + make_log(6, 200)
    cut = data.index(b"\n", len(data) - 5000) + 40  # the file ends inside a line
    path = tmp_path / "x.log"
    path.write_bytes(data[:cut])
    spans = [(0, len(data) // 2), (len(data) // 2 - 7000, len(data) // 2), (cut - 3000, len(data))]
    spans = [(data.rfind(b"\n", 0, s) + 1, e) for s, e in spans]  # ranges start at a line start
    fd = os.open(path, os.O_RDONLY)
    try:
        shared = bytearray()
        again = [_shape(R.scan_range(fd, s, e, 2026, shared)) for s, e in spans]
        fresh = [_shape(R.scan_range(fd, s, e, 2026)) for s, e in spans]
    finally:
        os.close(fd)
    assert again == fresh
    assert len(shared) > spans[1][1] - spans[1][0] + 1  # the longer range's bytes were still there
    last = fresh[-1]
    assert last[-1][1] == cut + 1  # read as far as the file goes, its cut line given a newline
    assert last[0][0] == spans[2][0] and all(a[1] == b[0] for a, b in zip(last, last[1:]))
    if fastscan.native_scanner():  # the Python scanner leaves this whole range to the line parser
        assert sum(len(p[3]) for p in last) >= 1  # the whole lines before the cut one were scanned
