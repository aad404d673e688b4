"""``specwatch replay``: the numbers on the panes are the core's (``summary --json``'s) for the
same file; segment boundaries show in the table, the chart and the verdict line."""

from __future__ import annotations

import pytest
from _tui_util import _isolated_config, replay_app, sample, screen_text, wait_ended  # noqa: F401

from tui.cli.summary import _clean
from tui.core.pipeline.whole import summarize_file
from tui.core.stats.verdicts import segment_comparison
from tui.panes.pane_numbers import pane_numbers
from tui.widgets.numbers import NumbersPanel
from tui.widgets.segment_table import SegmentTable
from tui.widgets.source_pane import SourcePane


def summary_of(name: str) -> dict:
    s = summarize_file(sample(name), name, source=sample(name), workers=1)
    d = _clean(s.result())
    d["segment_comparison"] = segment_comparison(s.stats)
    return d


@pytest.mark.parametrize(
    "name", ["sglang_eagle3_restart.log", "sglang_dp_attention.log", "vllm_v1_eagle3.log"]
)
async def test_pane_numbers_equal_summary(name):
    ref = summary_of(name)
    app = replay_app(name)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        pane = app.screen.query_one(SourcePane)
        stats = pane.state.stats
        assert stats.records == ref["records"]
        assert pane.state.lines == ref["lines"]
        assert len(stats.segments) == len(ref["segments"])
        for seg, want in zip(stats.segments, ref["segments"]):
            got = stats_dict = seg.to_dict()
            for key in ("accept_len", "accept_rate", "accept_rate_normalized", "throughput", "running_req"):
                for f in ("n", "mean", "ci95", "last", "window_mean"):
                    assert _clean(got[key] or {}).get(f) == pytest.approx((want[key] or {}).get(f)), (key, f)
            assert stats_dict["label"] == want["label"]
        # What the numbers block shows is the newest segment's statistics, to two decimals.
        shown = app.screen.query_one(NumbersPanel).values
        assert shown is not None
        last = ref["segments"][-1]
        assert shown.accept_len.mean == pytest.approx(last["accept_len"]["mean"])
        assert shown.accept_len.n == last["accept_len"]["n"]
        assert shown.accept_len.total_mean == pytest.approx(ref["accept_len"]["mean"])
        if last["accept_rate_normalized"]:
            assert shown.accept_rate.normalised_mean == pytest.approx(last["accept_rate_normalized"]["mean"])
        hw = (last["accept_len"]["ci95"][1] - last["accept_len"]["ci95"][0]) / 2
        text = screen_text(app)
        assert f"segment {last['accept_len']['mean']:.2f} ± {hw:.2f} (n={last['accept_len']['n']})" in text
        assert name in text and "ended" in text
        # One table row per segment, with the summary's mean ± CI.
        rows = app.screen.query_one(SegmentTable).row_texts()
        assert [r[0] for r in rows] == [str(s["index"]) for s in ref["segments"]]
        for row, seg in zip(rows, ref["segments"]):
            ci = seg["accept_len"]["ci95"]
            assert row[4] == f"{seg['accept_len']['mean']:.2f} ± {(ci[1] - ci[0]) / 2:.2f}"
            assert row[3] == str(seg["records"])


async def test_restart_shows_as_a_segment_boundary():
    ref = summary_of("sglang_eagle3_restart.log")
    app = replay_app("sglang_eagle3_restart.log")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        pane = app.screen.query_one(SourcePane)
        first_fixed = ref["segments"][0]["records"] + 1
        assert list(pane.state.boundaries) == [(first_fixed, 1)]
        chart = pane.chart_data(None)
        assert chart.time_axis  # the sample has timestamps: the x axis is the log's clock
        at = next(p.timestamp for p in pane.state.history if p.seq == first_fixed)
        assert any(
            x == at and "seg 1: EAGLE3 steps=5 topk=1 ndt=6" in label for x, label, _ in chart.boundaries
        )
        sc = ref["segment_comparison"]
        text = screen_text(app)
        lo, hi = sc["ci95"]
        assert f"segment 0 → 1: {sc['diff']:+.2f} (95% CI {lo:+.2f} … {hi:+.2f})" in text
        assert "higher" in text
        assert "seg 1: EAGLE3 steps=5" in text  # the chart's boundary label
        # The segment-start and "significantly higher" notifications were shown.
        notes = " | ".join(f"{n.title} {n.message}" for n in app._notifications)
        assert "new segment 1" in notes and "accept len is higher" in notes


async def test_rank_and_position_breakdowns():
    from tui.widgets.breakdown import Breakdown

    app = replay_app("sglang_dp_attention.log", "vllm_v1_eagle3.log", compare=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        dp, vllm = app.screen.query(Breakdown)
        assert sorted(dp.ranks) == ["DP0 TP0", "DP1 TP1", "DP2 TP2", "DP3 TP3"]
        assert dp.display and not dp.positions
        ref = summary_of("vllm_v1_eagle3.log")["segments"][-1]["per_position"]
        assert vllm.positions == pytest.approx(ref)
        assert "draft pos 1" in screen_text(app)


def test_pane_numbers_small_sample_warning():
    from tui.core.formats import LineParser
    from tui.core.sources.base import LineBatch
    from tui.core.stats import SourceStats

    lines = [l for l in open(sample("ab_a.log")).read().splitlines() if "Decode batch" in l][:5]
    st = SourceStats("x")
    st.feed(LineParser("x").feed_batch(LineBatch("x", lines, list(range(5)), 1)))
    v = pane_numbers(st)
    assert v.accept_len.n == 5
    assert v.warning is not None and "too few to conclude" in v.warning
