"""Notifications do not cover the help screen: they wait until it closes."""

from __future__ import annotations

from _tui_util import _isolated_config, notifications, replay_app, wait_ended, wait_for  # noqa: F401

from tui.screens.help import HelpScreen


async def test_toasts_wait_while_the_help_is_open():
    app = replay_app("ab_a.log", speed=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ended(pilot)
        app.clear_notifications()
        await pilot.press("question_mark")
        await pilot.pause()
        await wait_for(
            pilot, lambda: isinstance(app.screen, HelpScreen), "isinstance(app.screen, HelpScreen)"
        )
        for i in range(6):
            app.notify(f"note {i}")
        await pilot.pause()
        assert not notifications(app) and not list(app.screen.query("Toast"))  # absence: held
        await pilot.press("escape")
        await pilot.pause()
        await wait_for(
            pilot, lambda: not isinstance(app.screen, HelpScreen), "not isinstance(app.screen, HelpScreen)"
        )
        shown = notifications(app)
        assert [f"note {i}" for i in range(2, 6)] == [m.strip() for m in shown if "note " in m], shown
        assert any("2 more notifications while the help was open" in m for m in shown), shown
