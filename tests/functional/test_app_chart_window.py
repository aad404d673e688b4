"""`<` / `>`: the charts' time window, wider / narrower (Pilot: the real keys)."""

from __future__ import annotations

from _tui_util import _isolated_config, replay_app, wait_charts, wait_ended, wait_for  # noqa: F401

from tui.widgets.source_pane import DEFAULT_WINDOW, WINDOWS, SourcePane


async def test_chart_window_keys_narrow_and_widen_every_pane():
    app = replay_app("sglang_eagle3_restart.log", speed=None)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        pane = app.screen.query_one(SourcePane)
        assert pane.window == DEFAULT_WINDOW
        default_pts, _ = pane.chart_points()
        await pilot.press("greater_than_sign")  # one step narrower: the last hour by the log's clock
        await pilot.pause()
        await wait_for(pilot, lambda: pane.window == DEFAULT_WINDOW - 1, "pane.window == DEFAULT_WINDOW - 1")
        pts, words = pane.chart_points()
        assert words.startswith("last hour") and pts
        newest = pts[-1].timestamp
        assert all(p.timestamp is not None and p.timestamp >= newest - 3600 for p in pts)
        for _ in range(len(WINDOWS)):  # never past the narrowest
            await pilot.press("greater_than_sign")
        await pilot.pause()
        await wait_for(pilot, lambda: pane.window == 0, "pane.window == 0")
        narrow, words = pane.chart_points()
        assert words.startswith("last minute") and len(narrow) < len(default_pts)
        assert all(p.timestamp >= narrow[-1].timestamp - 60 for p in narrow)
        for _ in range(len(WINDOWS)):  # never past everything
            await pilot.press("less_than_sign")
        await pilot.pause()
        await wait_for(pilot, lambda: pane.window == len(WINDOWS) - 1, "pane.window == len(WINDOWS) - 1")
        everything, words = pane.chart_points()
        assert len(everything) == len([p for p in pane.state.history if p.accept_len is not None])
        assert words.startswith("everything")
        await wait_charts(pilot)


async def test_chart_labels_the_segment_at_its_left_edge():
    app = replay_app("sglang_eagle3_restart.log", speed=None)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        pane = app.screen.query_one(SourcePane)
        for key, want in (("greater_than_sign", "seg 1"), ("less_than_sign", "seg 0")):
            for _ in range(len(WINDOWS)):  # the last minute (in segment 1), then everything
                await pilot.press(key)
            await pilot.pause()
            data = pane.chart_data(None)
            xs = data.series[0].xs
            assert data.boundaries and data.boundaries[0][0] == xs[0]  # the left edge is labelled
            assert data.boundaries[0][1].startswith(want), data.boundaries
        # everything: segment 0 starts at the first record and is labelled there
        assert [b[1].split(":")[0] for b in data.boundaries] == ["seg 0", "seg 1"]
