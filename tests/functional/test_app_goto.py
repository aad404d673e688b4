"""``g``: go to a line number or a time in the focused pane's log tail (the real key, the input)."""

from __future__ import annotations

from _tui_util import _isolated_config, notifications, replay_app, wait_ended, wait_for  # noqa: F401

from tui.widgets.log_tail import LogTail, TailView
from tui.widgets.source_pane import SourcePane


async def _goto(pilot, text: str) -> None:
    await pilot.press("g")
    await pilot.pause()
    for ch in text:
        await pilot.press(ch)
    await pilot.press("enter")
    await pilot.pause()


async def test_g_goes_to_a_line_and_to_a_time_and_says_when_not_found():
    app = replay_app("sglang_eagle3_restart.log")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        pane = app.screen.query_one(SourcePane)
        view = pane.query_one(LogTail).query_one(TailView)
        await _goto(pilot, "2000")
        await wait_for(pilot, lambda: view.hit is not None, "line 2000 highlighted")
        hit = next(r for r in pane.state.raw if r.seq == view.hit)
        assert hit.line_no == 2000 and hit in view.lines
        assert any("log tail: line 2,000" in n for n in notifications(app))
        await _goto(pilot, "09:10")
        await wait_for(pilot, lambda: "09:10" in next(r.text for r in pane.state.raw if r.seq == view.hit))
        assert any("at or after 09:10 (09:10:0" in n for n in notifications(app)), notifications(app)
        await _goto(pilot, "12:00")
        assert any("12:00 is after the newest line (09:21:44)" in n for n in notifications(app))
