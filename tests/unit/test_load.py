"""Acceptance by batch size, the load-adjusted A/B, and whether speculation pays (issue 12)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from _load_util import ARGS, decode, mostly, throughput_log, write_log

from tui.core.pipeline.whole import summarize_file
from tui.core.stats.load import EDGES, LoadStrata, bin_of, bin_range
from tui.core.stats.verdicts import comparison

ROOT = Path(__file__).parent.resolve().parents[1]


def test_bins_cover_every_batch_size_once():
    assert [bin_of(x) for x in (0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 12)] == [0, 1, 2, 3, 4, 4, 5, 5, 6, 6, 7]
    assert bin_of(math.nan) == -1 and bin_of(-1.0) == -1
    for i in range(len(EDGES) - 1):
        lo, hi = bin_range(i)
        assert bin_of(lo) == i and hi is not None and bin_of(hi) == i and bin_of(hi + 1) == i + 1


def test_lower_at_equal_load_stays_lower_once_adjusted(tmp_path):
    rng = random.Random(4)
    a = summarize_file(str(write_log(tmp_path / "a.log", mostly(rng, 1, 60, 1500), 0.0, 5))).stats
    b = summarize_file(str(write_log(tmp_path / "b.log", mostly(rng, 1, 60, 1500), -0.3, 6))).stats
    c = comparison(a, b)
    assert c["accept_len"]["verdict"] == "lower"
    adj = c["accept_len_load_adjusted"]
    assert adj["verdict"] == "lower" and adj["diff"] == pytest.approx(-0.3, abs=0.08)
    assert adj["load"]["note"] is None  # same load: nothing to say


def test_no_common_batch_sizes_is_insufficient(tmp_path):
    rng = random.Random(7)
    a = summarize_file(str(write_log(tmp_path / "a.log", mostly(rng, 1, 3, 200, 0.0), 0.0, 8))).stats
    b = summarize_file(str(write_log(tmp_path / "b.log", mostly(rng, 40, 60, 200, 0.0), 0.0, 9))).stats
    adj = comparison(a, b)["accept_len_load_adjusted"]
    assert adj["verdict"] == "insufficient" and adj["ci95"] is None and adj["strata"] == []
    assert "batch-size bin" in adj["reason"]


def test_thin_common_strata_are_insufficient(tmp_path):
    rng = random.Random(10)
    a = summarize_file(str(write_log(tmp_path / "a.log", mostly(rng, 1, 3, 300, 0.04), 0.0, 11))).stats
    b = summarize_file(str(write_log(tmp_path / "b.log", mostly(rng, 40, 60, 300, 0.04), 0.0, 12))).stats
    adj = comparison(a, b)["accept_len_load_adjusted"]
    assert adj["verdict"] == "insufficient", adj


def test_strata_pooled_from_counts():
    s = LoadStrata()
    nan = math.nan
    n = 90
    v = {
        "running_req": [1.0, 2.0, 50.0] * (n // 3),
        "accept_len": [nan] * n,
        "accepted": [6.0, 4.0, 2.0] * (n // 3),
        "num_drafts": [3.0] * n,
    }
    s.add(v, False)
    out = s.to_list()
    assert [x["running_req"] for x in out] == [[1, 1], [2, 2], [48, 63]]
    assert [x["accept_len"]["mean"] for x in out] == pytest.approx([3.0, 1 + 4 / 3, 1 + 2 / 3])
    assert all(x["accept_len"]["estimator"] == "pooled" for x in out)


def test_speculation_pays_per_segment(tmp_path):
    # T = 1000 tokens/s at AL = 2.5 with 3 drafts per step: 400 steps/s, 600 accepted and
    # 400 · (3 − 1.5) = 600 rejected draft tokens/s; 60% of the output came from drafts.
    log = tmp_path / "s.log"
    log.write_text(ARGS + "".join(decode(i, 8, 2.5, 1000.0) for i in range(40)))
    seg = summarize_file(str(log)).result()["segments"][-1]
    sp = seg["speculation"]
    assert sp["generation_throughput"]["mean"] == pytest.approx(1000.0)
    assert sp["accepted_tokens_per_s"]["mean"] == pytest.approx(600.0)
    assert sp["rejected_tokens_per_s"]["mean"] == pytest.approx(600.0)
    assert sp["draft_share"]["value"] == pytest.approx(0.6)


def test_speculation_unknown_is_null_never_zero(tmp_path):
    # No config: drafts per step unknown, so no rejected tokens/s; no acceptance: no share.
    log = tmp_path / "s.log"
    log.write_text("".join(decode(i, 8, 2.5, 1000.0) for i in range(10)))
    sp = summarize_file(str(log)).result()["segments"][-1]["speculation"]
    assert sp["accepted_tokens_per_s"]["n"] == 10 and sp["drafts_per_step"] is None
    assert sp["rejected_tokens_per_s"] == {"mean": None, "ci95": None, "n": 0}
    base = tmp_path / "b.log"
    base.write_text("".join(decode(i, 8, None, 1000.0) for i in range(10)))
    sp = summarize_file(str(base)).result()["segments"][-1]["speculation"]
    assert sp["draft_share"] is None and sp["accepted_tokens_per_s"]["mean"] is None
    assert sp["generation_throughput"]["mean"] == pytest.approx(1000.0)


def test_speculation_from_counts_uses_drafted_per_step():
    # vLLM-like lines: 100 accepted of 3 · 70 drafted per line at 700 tokens/s: AL = 1 + 100/70,
    # d = 210/70 = 3.
    text = "".join(_vllm_like(i, 8, 100, 70, 700.0) for i in range(40))
    from tui.core.formats import LineParser
    from tui.core.stats import SourceStats

    parser, st = LineParser("x"), SourceStats("x")
    st.feed([it for no, ln in enumerate(text.splitlines(), 1) if (it := parser.feed(ln, no, 0)) is not None])
    sp = st.current.to_dict()["speculation"]
    al = 1 + 100 / 70
    assert sp["drafts_per_step"] == pytest.approx(3.0)
    assert sp["accepted_tokens_per_s"]["mean"] == pytest.approx(700 * (al - 1) / al)
    assert sp["rejected_tokens_per_s"]["mean"] == pytest.approx(700 / al * (3 - (al - 1)))


def test_throughput_ratio_equal_servers_no_difference(tmp_path):
    a = summarize_file(str(throughput_log(tmp_path / "a.log", 2.5, 1000.0, 15))).stats
    b = summarize_file(str(throughput_log(tmp_path / "b.log", 2.5, 1000.0, 16))).stats
    t = comparison(a, b)["throughput"]
    assert t["baseline"] is None and t["verdict"] == "no_difference"
    assert t["ci95"][0] < 1.0 < t["ci95"][1]


def _vllm_like(i: int, run: int, acc: int, drafts: int, tput: float) -> str:
    return (
        f"INFO 11-20 12:{i // 60 % 60:02d}:{i % 60:02d} [loggers.py:123] Engine 000: Avg prompt throughput: "
        f"0.0 tokens/s, Avg generation throughput: {tput:.1f} tokens/s, Running: {run} reqs, Waiting: 0 reqs, "
        f"GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%\n"
        f"INFO 11-20 12:{i // 60 % 60:02d}:{i % 60:02d} [metrics.py:96] SpecDecoding metrics: Mean acceptance "
        f"length: {1 + acc / drafts:.2f}, Accepted throughput: 1.0 tokens/s, Drafted throughput: 1.0 tokens/s, "
        f"Accepted: {acc} tokens, Drafted: {3 * drafts} tokens, Per-position acceptance rate: 0.8, 0.6, 0.4, "
        f"Avg Draft acceptance rate: {100 * acc / (3 * drafts):.1f}%\n"
    )


@pytest.mark.parametrize("kind", ["sglang", "vllm"])
def test_short_runs_and_long_runs_give_the_same_numbers(kind):
    from tui.core.formats import LineParser
    from tui.core.stats import SourceStats

    rng = random.Random(20)
    if kind == "sglang":
        text = ARGS + "".join(
            decode(i, rng.randint(1, 40), rng.uniform(1.5, 3.5), rng.uniform(500, 900)) for i in range(300)
        )
    else:
        text = "".join(
            _vllm_like(
                i, rng.randint(1, 40), rng.randint(50, 150), rng.randint(60, 80), rng.uniform(500, 900)
            )
            for i in range(300)
        )
    results = []
    for size in (3, 10_000):
        parser, st = LineParser("x"), SourceStats("x")
        items = [
            it for no, ln in enumerate(text.splitlines(), 1) if (it := parser.feed(ln, no, 0)) is not None
        ]
        for i in range(0, len(items), size):
            st.feed(items[i : i + size])
        seg = st.current.to_dict()
        results.append((seg["by_batch_size"], seg["speculation"]))
    assert results[0][0] and results[0][1]["rejected_tokens_per_s"]["n"] == 300
    assert _close(*results)


def _close(x, y) -> bool:
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(_close(x[k], y[k]) for k in x)
    if isinstance(x, (list, tuple)):
        return len(x) == len(y) and all(map(_close, x, y))
    if isinstance(x, float):
        return y == pytest.approx(x, rel=1e-9)
    return x == y
