"""The app's B − A bar: the load-adjusted verdict beside the raw one, and the throughput ratio."""

from __future__ import annotations

from _tui_util import _isolated_config, replay_app, sample, screen_text, wait_ended  # noqa: F401

from tui.cli.summary import _clean
from tui.core.summary import comparison, summarize_file
from tui.format import verdict_text
from tui.widgets.compare_bar import CompareBar


async def test_compare_bar_shows_load_adjusted_verdict_and_throughput():
    a = summarize_file(sample("ab_a.log"), "ab_a.log", workers=1)
    b = summarize_file(sample("ab_b.log"), "ab_b.log", workers=1)
    want = _clean(comparison(a.stats, b.stats))
    app = replay_app("ab_a.log", "ab_b.log")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        got = _clean(app.screen.query_one(CompareBar).comparison)
        assert got["accept_len_load_adjusted"]["verdict"] == want["accept_len_load_adjusted"]["verdict"]
        text = screen_text(app)
        assert (
            "at equal batch size " + verdict_text(want["accept_len_load_adjusted"], b_name="ab_b.log") in text
        )
        assert f"throughput B / A {want['throughput']['ratio']:.2f}×" in text


async def test_compare_bar_says_when_the_load_differs(tmp_path):
    import random

    from test_load import mostly, write_log

    rng = random.Random(1)
    a = write_log(tmp_path / "a.log", mostly(rng, 1, 3, 1500), 0.0, 2)
    b = write_log(tmp_path / "b.log", mostly(rng, 40, 60, 1500), 0.0, 3)
    app = replay_app(str(a), str(b))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        c = app.screen.query_one(CompareBar).comparison
        assert c is not None and c["accept_len"]["verdict"] == "lower"
        assert c["accept_len_load_adjusted"]["verdict"] == "no_difference"
        text = screen_text(app)
        assert "no significant difference" in text and "× A's batch size" in text
