"""One read step for every whole-file reader: a vLLM log read over SSH is scanned with the year
of its stamps, as a local file is (it used to be scanned with no year, so every chunk of it was
refused by the fast path and read a second time, line by line)."""

from __future__ import annotations

import os

from tests._scan_util import same, vllm_log
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
