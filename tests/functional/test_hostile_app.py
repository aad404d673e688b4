"""Hostile input through the app, in the Pilot: the screen, titles, notifications, tables and the
compare bar show it and obey none of it (in a real terminal: tests/integration/test_hostile_tmux.py).
"""

from __future__ import annotations

import re

from _hostile_util import CLEAR, CLIPBOARD, TITLE, forty_lines, unsafe_in, write_hostile
from _tui_util import _isolated_config, screen_text, wait_charts, wait_ended  # noqa: F401

from tui.app import SpecwatchApp
from tui.panes.launch import LaunchPlan, replay_pane
from tui.widgets.log_tail import LogTail


# -- the app (Pilot) ------------------------------------------------------------------------------------
async def test_app_shows_hostile_text_and_absurd_values_without_obeying_or_crashing(tmp_path):
    log = write_hostile(tmp_path / f"h{TITLE}.log")
    plan = LaunchPlan([replay_pane(str(log), None, speed=None)], compare=False)
    app = SpecwatchApp(plan)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        app.notify(f"remote says {TITLE}{CLIPBOARD}", title=f"host{CLEAR}")
        await pilot.pause()
        for _ in range(3):  # the app keeps ticking over nan / inf / 1e308 values
            app.screen.tick()
            await pilot.pause()  # its messages handled
            await wait_charts(pilot)  # and its charts drawn
        screen = screen_text(app)
        svg = app.export_screenshot()
        assert app.is_running and app.return_code is None
        assert not unsafe_in(svg), unsafe_in(svg)
        assert "␛]2;pwned-title␇" in screen  # the draft path / log text, shown
        assert not unsafe_in(app.title) and not unsafe_in(app.screen.title or "")
        assert all(not unsafe_in(n.message) and not unsafe_in(n.title) for n in app._notifications)
        tail = app.screen.query_one(LogTail)
        assert tail.shown and not any(unsafe_in(str(tail.query_one("TailView").render())) for _ in [0])
        await pilot.press("q")


async def test_40_line_log_with_1e308_the_app_keeps_running(tmp_path):
    log = forty_lines(tmp_path / "one.log")
    app = SpecwatchApp(LaunchPlan([replay_pane(str(log), None, speed=None)], compare=False))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        for _ in range(3):
            app.screen.tick()
            await pilot.pause()  # its messages handled
            await wait_charts(pilot)  # and its charts drawn
        assert app.is_running and app.return_code is None
        text = screen_text(app)
        assert "specwatch" in text and "chart unavailable" not in text
        assert not re.search(r"\d{20}", text)  # no 300-digit number anywhere on screen
        await pilot.press("q")
    assert app.return_code == 0


async def test_compare_labels_with_markup_and_escapes_stay_literal(tmp_path):
    a = write_hostile(tmp_path / f"a{TITLE}.log")
    b = write_hostile(tmp_path / "b[bold]x.log")
    panes = [replay_pane(str(a), f"A[/oops]{TITLE}", speed=None), replay_pane(str(b), None, speed=None)]
    app = SpecwatchApp(LaunchPlan(panes, compare=True))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        app.screen.tick()
        await pilot.pause()
        assert app.is_running and app.return_code is None  # absence: nothing in the labels was obeyed
        text = screen_text(app)
        assert "A[/oops]␛]2;pwned-title␇" in text
        assert "b[bold]x.log" in text
        assert not unsafe_in(app.export_screenshot())
        await pilot.press("q")
