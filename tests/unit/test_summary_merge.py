"""summary's scanners feed the statistics through their one entry point: runs precomputed in
worker processes, runs cut at any chunk end, the same statistics as the line parser's."""

from __future__ import annotations

import io

import pytest
from _scan_util import ODD_VLLM, PROC, llama_log, same, vllm_log

import tui.core.pipeline.ranges as summary_threads
import tui.core.pipeline.whole as summary
from tui.core.formats.fastscan import scan_chunk
from tui.core.formats.grammar import MARKER_ANCHORS
from tui.core.model.columns import RecordColumns
from tui.core.pipeline.whole import Summarizer, iter_chunks
from tui.core.stats import SourceStats
from tui.core.stats.precompute import precompute

REF = 1778000000.0  # 2026-05-05: the year of the generated vLLM stamps


def _runs(data: bytes) -> list[RecordColumns]:
    """The scanned runs of ``data`` without its marker lines (which the scanners leave to the
    line parser)."""
    keep = [x for x in data.split(b"\n") if not any(a.encode() in x for a in MARKER_ANCHORS)]
    sc = scan_chunk(b"\n".join(keep), 2026)
    assert sc is not None and sc.runs
    return sc.runs


def test_vllm_runs_precompute_and_merge_to_the_same_statistics():
    """A vLLM V1 run bounds each accept len by its own per-position list: its check and
    reduction need nothing from the segment, so a worker does them (two engines: per rank too)."""
    data = vllm_log(11, 3000, PROC, 2)
    (whole,) = _runs(data)
    cuts = [whole.slice(i, min(i + 3, whole.n)) for i in range(0, whole.n, 3)]
    plain, pre = SourceStats("t"), SourceStats("t")
    for rc in cuts:
        plain.add_columns(rc)
    done = 0
    for rc in [whole.slice(i, min(i + 3, whole.n)) for i in range(0, whole.n, 3)]:
        reduced = precompute(rc)  # not for a run with a refused value: add_columns quotes its line
        done += reduced is not None
        pre.add_columns(rc, reduced=reduced)
    assert 0 < done < len(cuts) and len(pre.current.ranks) == 2
    same(pre.to_dict(), plain.to_dict())


def test_runs_cut_anywhere_give_the_same_statistics():
    """llama.cpp completes drafts from drafted tokens / k, k learned as records come: the k a
    record gets does not depend on where the records were cut into runs."""
    data = llama_log(5, 2000)
    (whole,) = _runs(data)
    one = SourceStats("t")
    one.add_columns(whole)
    cut = SourceStats("t")
    for start in range(0, whole.n, 7):
        cut.add_columns(whole.slice(start, min(start + 7, whole.n)))
    same(cut.to_dict(), one.to_dict())
    assert one.to_dict()["tokens"]["drafted"] > 0


@pytest.mark.parametrize("workers", [1, 2])
def test_refused_values_are_quoted_with_their_line_on_every_path(tmp_path, monkeypatch, workers):
    """A refused value is quoted with its line number in the source and its text, whether its
    chunk was scanned here, by a worker, or read line by line."""
    monkeypatch.setattr(summary, "PARALLEL_MIN", 0)
    monkeypatch.setattr(summary_threads, "MAX_RANGE", 0)  # ranges of CHUNK bytes, however sparse
    monkeypatch.setattr(summary, "CHUNK", 64 << 10)
    data = vllm_log(5, 6000, PROC, 2, ODD_VLLM)  # restarts; its values include some out of physical range
    lines = data.split(b"\n")
    path = tmp_path / "v.log"
    path.write_bytes(data)
    slow = Summarizer("x", ref_time=path.stat().st_mtime)
    for off, buf in iter_chunks(io.BytesIO(data), 1 << 16):
        slow.feed(buf, off, None)
    s = summary.summarize_file(str(path), source="x", workers=workers)
    assert s.fast_chunks > 3
    d, ref = s.result(), slow.result()
    examples = [d["refused"]["example"]] + [
        x["example"] for seg in d["segments"] for x in seg["diagnostics"] if x["code"] == "values_refused"
    ]
    assert len(examples) == 4 and max(ex["line"] for ex in examples) > 5000
    for ex in examples:
        assert ex["text"] == lines[ex["line"] - 1].decode()
    same({k: v for k, v in d.items() if k != "bytes"}, {k: v for k, v in ref.items() if k != "bytes"})
