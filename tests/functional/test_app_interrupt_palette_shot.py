"""Small things of issue 31 (item 8): ``ctrl+c`` leaves as a SIGINT does (the same exit path: 130,
the signal noted for the command's one line); the command palette finds an action by its footer
words (``svg``); a screenshot (``s``) never has the toasts on the screen in it."""

from __future__ import annotations

import signal

from _tui_util import _isolated_config, finished, replay_app, wait_for  # noqa: F401
from textual.command import CommandPalette
from textual.widgets import OptionList

from tui.core.model import stop


async def test_ctrl_c_leaves_as_an_interrupt_does(tmp_path):
    app = replay_app("ab_a.log", save_dir=tmp_path)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            await pilot.press("slash")  # the filter's input has the focus: ctrl+c still leaves
            await pilot.pause()
            await pilot.press("ctrl+c")
            await wait_for(pilot, lambda: app.return_value is not None, "the app's exit")
        assert app.return_value == 130
        assert app.stopped_by == signal.SIGINT and stop.requested() == signal.SIGINT
    finally:
        stop.reset()  # the signal noted is this test's only


async def test_the_palette_finds_an_action_by_its_footer_words(tmp_path):
    app = replay_app("ab_a.log", save_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"svg")
        options = app.screen.query_one(OptionList)
        await wait_for(pilot, lambda: options.option_count > 0, "a hit")
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert prompts[0].startswith("Save a screenshot · SVG"), prompts
        await pilot.press("enter")
        await wait_for(pilot, lambda: list(tmp_path.glob("*.svg")), "the screenshot saved from the palette")


async def test_a_screenshot_has_no_toasts_in_it(tmp_path):
    app = replay_app("ab_a.log", save_dir=tmp_path)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await finished(pilot)
        app.notify("Toastword", timeout=60)
        await wait_for(pilot, lambda: "Toastword" in app.export_screenshot(), "the toast shown")
        await pilot.press("s")
        await wait_for(pilot, lambda: list(tmp_path.glob("*.svg")), "the screenshot")
        svg = next(tmp_path.glob("*.svg")).read_text()
        assert "Toastword" not in svg and "accept" in svg
        await pilot.pause()
        racks = list(app.screen.query("#textual-toastrack"))
        assert racks and all(r.display for r in racks)  # the toasts are shown again
        await wait_for(pilot, lambda: "screenshot" in app.export_screenshot(), "the path said")
