"""One read step for every whole-file reader: a vLLM log read over SSH is scanned with the year
of its stamps, as a local file is (it used to be scanned with no year, so every chunk of it was
refused by the fast path and read a second time, line by line); a damaged zstd log reads over SSH
as locally; and the scanning threads' parts read every bundled log as the line parser does."""

from __future__ import annotations

import os

import pytest

from tests._scan_util import same, vllm_log
from tests._summary_snapshot import ROOT, snapshot_files
from tui.core.pipeline import whole
from tui.core.pipeline.whole import summarize_file
from tui.core.sources.kinds import remote_whole
from tui.core.sources.kinds.remote_whole import summarize_remote
from tui.core.sources.target import SshTarget


async def test_a_vllm_log_over_ssh_is_read_fast_and_as_the_local_one(server, tmp_path, monkeypatch):
    monkeypatch.setattr(whole, "CHUNK", 64 << 10)  # many chunks, most without a startup line
    monkeypatch.setattr(remote_whole, "CHUNK", 64 << 10)
    log = tmp_path / "vllm.log"
    log.write_bytes(vllm_log(7, 4000))
    os.utime(log, (1_780_000_000, 1_780_000_000))  # 2026: the stamps' year
    local = summarize_file(str(log), "x", "x", workers=1)
    remote = await summarize_remote(
        SshTarget("127.0.0.1", str(log), "u", server.port), "x", "x", server.settings()
    )
    assert remote.stats.records == local.stats.records > 0
    # no chunk refused for its year and read again in pieces: only the local file's slow pieces
    # (around its startup line) go line by line
    assert remote.fast_chunks > 4 and remote.slow_chunks == local.slow_chunks
    a, b = remote.result(), local.result()
    for key in ("lines", "records", "accept_len", "accept_rate", "segments"):
        same(a[key], b[key])  # equal up to float summation order (the chunks differ)


async def test_a_damaged_zstd_log_over_ssh_reads_as_the_local_one(server, tmp_path):
    """A zstd file of several frames with damage mid-line in one: over SSH, as locally, the line
    the damage cuts is dropped, not joined to the first line of the next intact frame."""
    import zstandard

    from tui.core.pipeline.whole_sets import summarize_paths

    lines = vllm_log(11, 3000).splitlines(keepends=True)
    q = len(lines) // 4
    frames = [b"".join(lines[i * q : (i + 1) * q if i < 3 else None]) for i in range(4)]
    packed = [zstandard.ZstdCompressor(level=3).compress(f) for f in frames]
    bad = bytearray(packed[1])
    bad[len(bad) // 2 : len(bad) // 2 + 64] = bytes(64)
    packed[1] = bytes(bad)
    log = tmp_path / "vllm.log.zst"
    log.write_bytes(b"".join(packed))
    os.utime(log, (1_780_000_000, 1_780_000_000))
    local = summarize_paths([str(log)], "x", "x")
    remote = await summarize_remote(
        SshTarget("127.0.0.1", str(log), "u", server.port), "x", "x", server.settings()
    )
    a, b = remote.result(), local.result()
    assert local.input_warnings and "went on at the next frame" in local.input_warnings[0]
    where = f"u@127.0.0.1:{server.port}:{log}"
    assert remote.input_warnings == [w.replace(str(log), where) for w in local.input_warnings]
    assert (a["lines"], a["records"], a["malformed"]) == (b["lines"], b["records"], b["malformed"])
    for key in ("accept_len", "accept_rate", "segments"):
        same(a[key], b[key])


@pytest.mark.parametrize("path", snapshot_files())
def test_every_bundled_log_reads_the_same_by_the_threads_and_line_by_line(path, monkeypatch):
    """The scanning threads' parts (ranges of 16 KiB here: many parts, each cut right before a
    line the scanner leaves to the line parser) give what the line parser gives reading every
    line: a family's state follows the lines the scanner read (``Format.scanned``; llama.cpp's
    per-request lines, scanned, used to leave the statistics line after them a record of its
    own)."""
    monkeypatch.setattr(whole, "PARALLEL_MIN", 0)
    monkeypatch.setattr(whole, "CHUNK", 16 << 10)
    monkeypatch.setattr(whole, "range_size", lambda f, base: base)
    threads = summarize_file(str(ROOT / path), "x", "x", workers=2).result()
    monkeypatch.setattr(whole, "PARALLEL_MIN", 1 << 60)
    monkeypatch.setattr(whole, "scan_chunk", lambda *a, **k: None)  # every line by the line parser
    lines = summarize_file(str(ROOT / path), "x", "x", workers=1).result()
    # one known gap, never a wrong number: the traced verify steps of a llama.cpp request whose
    # per-request line a thread scanned give no histogram (None), where the line parser, reading
    # the steps and the request in order, gives it
    for seg_t, seg_l in zip(threads["segments"], lines["segments"]):
        rt, rl = seg_t.get("requests"), seg_l.get("requests")
        if rt and rl and rt.get("step_histogram") is None and rl.get("step_histogram") is not None:
            rt["step_histogram"] = rl["step_histogram"]
    for key in ("lines", "records", "malformed", "accept_len", "accept_rate", "segments"):
        same(threads[key], lines[key])
