"""`l` in compare mode with the overlay chart on: the log tails show in the panes together with the
overlay (no blank rows), ctrl+f finds in them; where a pane has no room, `l` says so. The overlay
chart never runs off the screen, and at 80×24 it is drawn in the rows left (issue 31: no "no room"
over blank rows)."""

from __future__ import annotations

from _tui_util import _isolated_config, finished, notifications, replay_app, wait_for  # noqa: F401

from tui.widgets.history_chart import HistoryChart
from tui.widgets.log_tail import LogTail, TailView
from tui.widgets.source_pane import SourcePane


async def test_l_shows_the_log_tails_with_the_overlay_and_ctrl_f_finds():
    app = replay_app("ab_a.log", "ab_b.log")
    async with app.run_test(size=(160, 45)) as pilot:
        await finished(pilot)
        overlay = app.screen.query_one("#overlay", HistoryChart)
        assert overlay.region.height >= 8
        await pilot.press("l")
        panes = list(app.screen.query(SourcePane))
        await wait_for(pilot, lambda: all(p.log_shown for p in panes), "log tails shown")
        await wait_for(pilot, lambda: any("log tails shown" in n for n in notifications(app)), "l's words")
        for p in panes:
            view = p.query_one(LogTail).query_one(TailView)
            await wait_for(pilot, lambda v=view: bool(v.lines), "lines in the log tail")
            assert view.region.height >= 4
            assert view.region.bottom <= p.region.bottom  # inside its pane, not below it
        assert overlay.display and overlay.region.height >= 8  # the overlay still shown
        assert overlay.region.bottom <= app.screen.region.bottom - 1  # above the footer
        await pilot.press("ctrl+f", *"decode", "enter")
        await pilot.pause()
        tail = panes[0].query_one(LogTail)
        await wait_for(pilot, lambda: tail.query_one(TailView).hit is not None, "a line found")


async def test_at_80x24_the_overlay_steps_aside_and_l_says_where_there_was_no_room():
    app = replay_app("ab_a.log", "ab_b.log")
    async with app.run_test(size=(80, 24)) as pilot:
        await finished(pilot)
        overlay = app.screen.query_one("#overlay", HistoryChart)
        assert overlay.region.bottom <= app.screen.region.bottom - 1  # never under the footer
        # the overlay is drawn in the rows left under the panes: its plot and its legend row
        assert overlay.display and overlay.size.height >= 3
        text = " ".join(overlay.render_line(y).text for y in range(overlay.size.height))
        bar = str(app.screen.query_one("#compare").border_subtitle or "")
        assert "A ab_a.log" in text and "no room" not in text + bar, (text, bar)
        box = app.screen.query_one("#overlay-box")
        assert box.region.bottom == app.screen.region.bottom - 1  # every row to the footer used
        await pilot.press("l")
        await wait_for(
            pilot,
            lambda: any("log tail" in n and ("no room" in n or "shown" in n) for n in notifications(app)),
            "l says what it showed or hid",
        )
        panes = list(app.screen.query(SourcePane))
        hidden = [p for p in panes if not p.log_shown]
        words = " ".join(notifications(app))
        assert ("no room for" in words) == bool(hidden)
