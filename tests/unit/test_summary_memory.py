"""Python-level peak allocation of a summary is set by the chunk size, not the file size."""

from __future__ import annotations

from _cli_util import ROOT

SAMPLES = ROOT / "sample_logs"


def test_memory_does_not_grow_with_file_size(tmp_path, monkeypatch):
    """Python-level peak allocation is set by the chunk size, not the file size.

    (Process RSS also stays bounded, but glibc keeps freed chunk buffers for a while, so RSS
    reaches its plateau only after ~80 MB: bench/bench_summary.py reports it on 1 GB.)
    """
    import tracemalloc

    import tui.core.pipeline.whole as summary

    monkeypatch.setattr(summary, "CHUNK", 1 << 20)
    startup = (b"server_args", b"vLLM API", b"Started server", b"ready to roll", b"non-default")

    def body(name: str) -> bytes:  # one server's traffic, without its start-up lines
        return b"".join(
            line
            for line in (SAMPLES / name).read_bytes().splitlines(keepends=True)
            if not any(m in line for m in startup)
        )

    sglang, vllm = body("ab_a.log"), body("vllm_v1_eagle3.log")  # fast-path and line-parser chunks
    peaks = []
    for copies in (6, 24):
        path = tmp_path / f"x{copies}.log"
        path.write_bytes((sglang * 3 + vllm) * (copies // 3))
        tracemalloc.start()
        s = summary.summarize_file(str(path), workers=1)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert s.fast_chunks and s.slow_chunks
    assert peaks[1] < peaks[0] * 1.1, peaks  # 4x the data, the same peak
