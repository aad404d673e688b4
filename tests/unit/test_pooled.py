"""Pooled acceptance, physical bounds, the one entry point, and warnings (issue 9)."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest
from _scan_util import vllm_line

from tui.core.formats import LineParser
from tui.core.formats.sglang.rates import RATE_SGLANG_AL_OVER_NDT, RATE_SGLANG_AL_OVER_STEPS1, infer_sglang
from tui.core.model.columns import RecordColumns
from tui.core.model.records import Record
from tui.core.pipeline.whole import summarize_file, summarize_stream
from tui.core.stats import SourceStats
from tui.core.stats.verdicts import comparison

REAL = Path(__file__).parent.parent / "fixtures" / "real_logs"


def stats_of(lines: list[str], name: str = "t") -> SourceStats:
    return summarize_stream(io.BytesIO("".join(lines).encode()), name).stats


def test_pooled_verdict_where_the_mean_of_lines_misleads():
    a = stats_of([vllm_line(i, 2.80, 300) for i in range(100)], "a")
    b = stats_of(
        [vllm_line(i, 2.60 if i % 2 == 0 else 3.33, 600 if i % 2 == 0 else 6) for i in range(100)], "b"
    )
    mb = b.current.all.accept_len.mean
    assert mb == pytest.approx((2.60 + 3.33) / 2, abs=0.01)  # mean of lines: 2.97, "higher"
    pooled = b.current.all.pooled_len.value
    assert pooled == pytest.approx(1 + (50 * 960 + 50 * 14) / (50 * 606))  # 2.61
    c = comparison(a, b)["accept_len"]
    assert c["estimator"] == "pooled"
    assert c["verdict"] == "lower"
    assert c["mean_a"] == pytest.approx(2.80) and c["mean_b"] == pytest.approx(pooled)


def test_three_vllm_lines_with_k_3_have_a_possible_ci():
    st = stats_of([vllm_line(0, 1.2, 50), vllm_line(1, 3.9, 50), vllm_line(2, 1.5, 50)])
    d = st.to_dict()["segments"][0]
    lo, hi = d["accept_len"]["ci95"]
    assert 1.0 <= lo <= hi <= 4.0
    plo, phi_ = d["accept_len"]["pooled"]["ci95"]
    assert 1.0 <= plo <= phi_ <= 4.0
    rlo, rhi = d["accept_rate"]["pooled"]["ci95"]
    assert 0.0 <= rlo <= rhi <= 1.0


def test_weights_never_mix_units():
    # vLLM lines weigh by their drafts; a line without a drafts count is left out of the weighted
    # mean (not weighted by #running-req).
    lines = [vllm_line(0, 2.0, 100), vllm_line(1, 3.0, 300), vllm_line(2, 4.0, 50, k=None)]
    st = stats_of(lines)
    al = st.current.all.accept_len
    assert al.n == 3 and al.wn == 3  # k learned from the first lines: 50 drafts = 150 / 3
    assert al.weighted_mean == pytest.approx((2.0 * 100 + 3.0 * 300 + 4.0 * 50) / 450)
    assert st.current.all.pooled_len.value == pytest.approx(1 + (100 + 600 + 150) / 450)


@pytest.mark.parametrize(
    "name,drafts,accepted,rate_drafted",
    [
        # 137: k=3 from the per-position list; drafts = 783/3 + 780/3 = 261 + 260.
        ("vllm_issue_noonghunna-club-3090_137.log", 521, 472 + 548, 783 + 780),
        # ascend 12521: two processes, 453/3 drafts each.
        ("vllm_issue_vllm-project-vllm-ascend_12521.log", 302, 282 + 299, 906),
    ],
)
def test_hand_worked_pooled_values_on_real_vllm_logs(name, drafts, accepted, rate_drafted):
    d = summarize_file(str(REAL / name), workers=1).result()
    p = d["accept_len"]["pooled"]
    assert p["drafts"] == pytest.approx(drafts) and p["accepted"] == pytest.approx(accepted)
    assert p["value"] == pytest.approx(1 + accepted / drafts)
    assert d["accept_rate"]["pooled"]["value"] == pytest.approx(accepted / rate_drafted)


def test_vllm_v0_counters_are_pooled_from_their_differences():
    # 7301: k=5; cumulative (accepted, drafted, emitted) (1, 5, 1) then (1, 15, 3): intervals
    # (1, 5, 1) and (0, 10, 2), i.e. 1 + 2 drafts, emitted 3: accept len 3/3, rate 1/15.
    d = summarize_file(str(REAL / "vllm_issue_vllm-project-vllm_7301.log"), workers=1).result()
    assert d["accept_len"]["pooled"]["value"] == pytest.approx(1.0)
    assert d["accept_len"]["pooled"]["drafts"] == pytest.approx(3.0)
    assert d["accept_rate"]["pooled"]["value"] == pytest.approx(1 / 15)


def sglang(al: str, rate: str = "0.50", ts: str = "2026-05-01 10:00:00") -> str:
    return (
        f"[{ts} TP0] Decode batch, #running-req: 8, #token: 4000, token usage: 0.10, accept len: {al}, "
        f"accept rate: {rate}, cuda graph: True, gen throughput (token/s): 250.00, #queue-req: 0, \n"
    )


def test_impossible_values_are_counted_and_left_out():
    lines = [sglang("2.50")] * 10 + [sglang("99.00"), sglang("1e308"), sglang("0.50"), sglang("2.50", "-1")]
    for parser_only in (False, True):
        if parser_only:
            p, st = LineParser("t"), SourceStats("t")
            for i, line in enumerate(lines, 1):
                it = p.feed(line.rstrip("\n"), i, 0)
                if it is not None:
                    st.feed([it])
        else:
            st = stats_of(lines)
        al = st.current.all.accept_len
        assert al.mean == pytest.approx(2.5) and al.n == 11
        assert al.out_of_range == 3  # 0.50 < 1; 99 and 1e308 > 65 (k unknown: at most 64)
        d = st.to_dict()
        diag = [x for x in d["segments"][0]["diagnostics"] if x["code"] == "values_refused"]
        assert diag and diag[0]["level"] == "warning" and "e.g. line" in diag[0]["message"]
        assert d["accept_rate"]["out_of_range"] == 1


def test_nonfinite_values_never_reach_arithmetic():
    lines = [sglang("2.50")] * 5 + [sglang("inf"), sglang("nan")]
    st = stats_of(lines)
    d = st.to_dict()
    json.dumps(d)
    assert d["accept_len"]["mean"] == pytest.approx(2.5)
    assert d["accept_len"]["n"] == 5 and d["accept_len"]["nonfinite"] == 2
    assert d["refused"]["nonfinite"] == {"accept_len": 2} and d["refused"]["example"]["line"] == 6


def test_accept_len_above_k_plus_1_is_refused_when_k_is_known():
    st = stats_of([vllm_line(0, 2.0, 100), vllm_line(1, 3.0, 100)])
    bad = Record("t", 3, 0, "vllm", "spec", "raw text", accept_len=4.5, per_position=(0.5, 0.5, 0.5))
    st.feed([bad])
    assert st.current.all.accept_len.n == 2 and st.current.all.accept_len.out_of_range == 1
    assert st.refused.example == {"line": 3, "field": "accept_len", "value": "4.5", "text": "raw text"}


def test_one_by_one_equals_columns():
    lines = [vllm_line(i, 1.5 + (i % 7) / 4, 40 + i % 13) for i in range(300)]
    p = LineParser("t")
    recs = [r for i, line in enumerate(lines, 1) if isinstance(r := p.feed(line.rstrip("\n"), i, 0), Record)]
    one, bulk, cols = SourceStats("t"), SourceStats("t"), SourceStats("t")
    for r in recs:
        one.feed([r])
    bulk.feed(recs)
    cols.add_columns(RecordColumns.from_records(recs))
    ref = _approx(bulk.to_dict())
    assert one.to_dict() == ref
    assert cols.to_dict() == ref


def _approx(x):
    if isinstance(x, float):
        return pytest.approx(x, rel=1e-9, abs=1e-12) if math.isfinite(x) else x
    if isinstance(x, dict):
        return {k: _approx(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_approx(v) for v in x]
    return x


def test_no_draft_accepted_fires_at_100_drafted_tokens():
    zero = [vllm_line(i, 1.0, 30) for i in range(2)]  # 2 lines, 180 drafted tokens, 0 accepted
    st = stats_of(zero)
    codes = {d["code"]: d for d in st.current.diagnostics()}
    assert "0 of 180 drafted tokens accepted" in codes["accept_len_stuck_at_1"]["message"]
    few = stats_of([vllm_line(0, 1.0, 30)])  # 90 drafted: too early to say
    assert "accept_len_stuck_at_1" not in {d["code"] for d in few.current.diagnostics()}


def test_sglang_oct_nov_2025_rate_is_recognised():
    oct_ = 1761130800.0  # 2025-10-22
    pairs = [(al, round(al / 4, 2)) for al in (2.17, 2.5, 3.05, 1.0, 3.99)]
    assert infer_sglang(pairs, 3, 4, oct_).definition == RATE_SGLANG_AL_OVER_STEPS1
    assert infer_sglang(pairs, None, None, oct_).definition == RATE_SGLANG_AL_OVER_STEPS1
    dec = 1765000000.0  # 2025-12-06
    assert infer_sglang(pairs, 3, 4, dec).definition == RATE_SGLANG_AL_OVER_NDT
    st = stats_of([sglang("2.17", "0.54", "2025-10-22 10:00:00")] * 3)
    assert st.current.rate_definition().definition == RATE_SGLANG_AL_OVER_STEPS1


def test_precomputed_columns_give_the_same_statistics():
    """summary's workers check and reduce SGLang columns ahead (precompute); the main process
    then only merges, unless the segment's bounds say otherwise."""
    from tui.core.stats.precompute import precompute

    lines = [sglang(f"{1 + (i % 9) / 4:.2f}", "0.50") for i in range(200)] + [sglang("70.00"), sglang("nan")]
    p = LineParser("t")
    recs = [r for i, line in enumerate(lines, 1) if isinstance(r := p.feed(line.rstrip("\n"), i, 0), Record)]
    plain, pre = SourceStats("t"), SourceStats("t")
    plain.add_columns(RecordColumns.from_records(recs[:200]))
    cols = RecordColumns.from_records(recs[:200])
    reduced = precompute(cols)
    assert reduced is not None
    pre.add_columns(cols, reduced=reduced)
    assert pre.to_dict() == _approx(plain.to_dict())
    # A run with refused values is left to add_columns, which quotes the refused line (only the
    # process that owns the statistics numbers the lines).
    plain.add_columns(RecordColumns.from_records(recs))
    cols1 = RecordColumns.from_records(recs)
    assert precompute(cols1) is None
    pre.add_columns(cols1)
    assert pre.to_dict() == _approx(plain.to_dict())
    assert pre.refused.total() == plain.refused.total() == 2
    # A segment whose k is known refuses what the depth-free check kept: the precomputed values
    # are not used there.
    for st in (plain, pre):
        st.current.config.num_steps = 1  # accept len ≤ 2
    cols2 = RecordColumns.from_records(recs)
    plain.add_columns(RecordColumns.from_records(recs))
    pre.add_columns(cols2, reduced=precompute(cols2))
    assert pre.to_dict() == _approx(plain.to_dict())
    assert pre.current.all.accept_len.out_of_range > 0


def test_llamacpp_rate_is_pooled_not_normalised_by_a_guessed_k():
    line = (
        "0.06.895.980 I slot print_timing: id  1 | task {t} | draft acceptance = {r:.5f} ( {a} accepted / "
        "{d} generated), mean acceptance length = {al:.2f}, acceptance rate per position = (0.805, 0.632, 0.483)\n"
    )
    lines = [
        line.format(t=0, r=167 / 258, a=167, d=258, al=1 + 167 / 86),
        line.format(t=1, r=0.5, a=90, d=180, al=2.5),
    ]
    d = stats_of(lines).to_dict()["segments"][0]
    # llama.cpp drafts a varying number of tokens per step and its per-position list is as long as
    # the longest accepted run: no k is taken from it, so no (AL-1)/k rate is made up; the rate it
    # prints is already accepted / drafted tokens, pooled below.
    assert d["rate_definition"]["drafts_per_step"] is None
    assert d["accept_rate_normalized"] is None
    # nor are drafted tokens / k taken for its verify steps: only its statistics lines count them
    # (tests/integration/test_release_logs.py), so without them there is no pooled length
    assert d["accept_len"]["pooled"] is None
    assert d["accept_rate"]["pooled"]["value"] == pytest.approx(257 / 438)


def test_pane_warning_uses_the_effective_n():
    from tui.panes.pane_numbers import pane_numbers

    rng_lines = [sglang(f"{2.0 + 0.01 * i:.2f}") for i in range(60)]  # a steady drift: ~no independence
    st = stats_of(rng_lines)
    w = pane_numbers(st).warning
    assert w is not None and "n=60 but consecutive values are strongly correlated" in w
    flat = stats_of([sglang(f"{2.0 + 0.5 * ((i * 7919) % 13) / 13:.2f}") for i in range(60)])
    assert pane_numbers(flat).warning is None


def test_pooled_effective_n_is_about_n_for_independent_intervals_at_any_length():
    """Beyond UNITS intervals the batches hold several intervals each; the effective sample size
    of the pooled ratio must still be about n for independent intervals (it once shrank as
    n / size², so a long vLLM log read as '1 independent value' and every A/B verdict as
    insufficient)."""
    import random

    from tui.core.stats.compare import HIGHER, compare
    from tui.core.stats.pooled import RatioSeries

    def series(seed: int, p: float, n: int) -> RatioSeries:
        rng = random.Random(seed)
        drafts = [float(rng.randint(20, 400)) for _ in range(n)]
        accepted = [float(sum(rng.random() < p for _ in range(3)) * d // 3) for d in drafts]
        s = RatioSeries(1.0)
        for i in range(0, n, 997):  # in runs, as the readers add them
            s.add_many(accepted[i : i + 997], drafts[i : i + 997])
        return s

    for n in (500, 5_000, 60_000):
        e = series(1, 0.6, n).estimate()
        assert e.ess is not None and 0.5 * n <= e.ess <= n, (n, e.ess)
    a, b = series(2, 0.6, 60_000).estimate(), series(3, 0.62, 60_000).estimate()
    assert compare(a, b).verdict == HIGHER


def test_the_b_minus_a_bar_names_each_rows_own_pooled_estimator():
    from tui.panes.pane_numbers import estimator_words

    a = stats_of([vllm_line(i, 2.80, 300) for i in range(100)], "a")
    b = stats_of([vllm_line(i, 2.60, 300) for i in range(100)], "b")
    c = comparison(a, b)
    assert c["accept_len"]["estimator"] == "pooled" and c["accept_rate"]["estimator"] == "pooled"
    assert estimator_words(c["accept_len"]) == "pooled: 1 + Σaccepted/Σdrafts"
    assert estimator_words(c["accept_rate"], "accept_rate") == "pooled: Σaccepted/Σdrafted"
