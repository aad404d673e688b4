"""A log truncated (rotated by copytruncate) while ``summary`` reads it, in process: the ranges
were cut from the file's old size, then the file shrinks; every range is read as far as the file
goes now (``pread`` into memory of its own, no mapping). The child-process check of the same is
tests/integration/test_summary_truncated_child.py."""

from __future__ import annotations

import os


def test_summary_of_a_file_truncated_before_its_ranges_are_read(tmp_path, monkeypatch):
    """The ranges were cut from the file's old size; the file is then truncated: every range is
    read as far as the file goes now, without a crash, and the lines still there are counted."""
    import tui.core.pipeline.ranges as summary_threads
    import tui.core.pipeline.whole as summary

    line = b"[2026-01-01 00:00:00 TP0] Decode batch, #running-req: 1, #token: 1, token usage: 0.01, "
    line += b"accept len: 2.00, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 1.00, #queue-req: 0\n"
    path = tmp_path / "x.log"
    path.write_bytes(line * 20000)
    cut = len(line) * 5000
    real_ranges = summary_threads.ranges

    def ranges_then_truncate(f, size):
        r = real_ranges(f, size)
        os.truncate(path, cut)
        return r

    monkeypatch.setattr(summary, "PARALLEL_MIN", 0)
    monkeypatch.setattr(summary, "CHUNK", 1 << 16)
    monkeypatch.setattr(summary_threads, "MAX_RANGE", 0)
    monkeypatch.setattr(summary, "scan_ranges", ranges_then_truncate)
    s = summary.summarize_file(str(path), workers=2)
    assert s.lines == 5000 and s.stats.to_dict()["accept_len"]["n"] == 5000
