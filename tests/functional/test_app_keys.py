"""Every key does what the footer and help say."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from _tui_util import (  # noqa: F401
    _isolated_config,
    live_app,
    replay_app,
    sample,
    screen_text,
    wait_ended,
    wait_for,
)

from tui.screens.help import HelpScreen
from tui.screens.messages import MarkAdded, RecordsExported, RestartMarked, ScreenshotSaved
from tui.screens.theme_picker import ThemePicker
from tui.screens.watch import WatchScreen
from tui.widgets.log_tail import LogTail
from tui.widgets.source_pane import SourcePane


def unique(messages, kind):
    """Messages of a kind, once each (a bubbling message is seen by the screen and the app)."""
    seen, out = set(), []
    for m in messages:
        if isinstance(m, kind) and id(m) not in seen:
            seen.add(id(m))
            out.append(m)
    return out


async def test_space_pauses_replay_and_plus_minus_change_speed(tmp_path):
    app = replay_app("ab_a.log", speed=1.0, save_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.states[0].source is not None)
        src = screen.states[0].source
        await pilot.press("space")
        await wait_for(pilot, lambda: src.paused, "src.paused")
        assert "paused" in screen.states[0].status_text()
        await pilot.press("space")
        await wait_for(pilot, lambda: not src.paused, "not src.paused")
        await pilot.press("plus")
        await wait_for(pilot, lambda: src.speed == 2.0, "src.speed == 2.0")
        await pilot.press("minus", "minus")
        await wait_for(pilot, lambda: src.speed == 0.5, "src.speed == 0.5")
        for _ in range(20):
            await pilot.press("plus")
        assert src.speed is None  # as fast as possible, the top of the list
        await wait_ended(pilot)
        assert screen.states[0].stats.records == 1524


async def test_space_freezes_a_live_view_but_keeps_reading(tmp_path):
    log = tmp_path / "server.log"
    lines = open(sample("ab_a.log")).read().splitlines(keepends=True)
    log.write_text("".join(lines[:200]))
    app = live_app(log, tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        state = screen.states[0]
        await wait_for(pilot, lambda: state.lines == 200)
        screen.tick()
        await pilot.press("space")
        await wait_for(pilot, lambda: screen.frozen, "screen.frozen")
        shown = screen.query_one(SourcePane).query_one("NumbersPanel").values.accept_len.n
        with open(log, "a") as f:
            f.write("".join(lines[200:1200]))
        await wait_for(pilot, lambda: state.lines == 1200)
        screen.tick()
        assert screen.query_one("NumbersPanel").values.accept_len.n == shown  # frozen
        await pilot.pause()
        await wait_for(pilot, lambda: "view frozen" in screen_text(app), "'view frozen' in screen_text(app)")
        await pilot.press("space")
        await wait_for(pilot, lambda: not screen.frozen, "not screen.frozen")
        screen.tick()
        assert (
            screen.query_one("NumbersPanel").values.accept_len.n
            == state.stats.current.all.accept_len.n
            > shown
        )
        assert state.status_text().startswith("live")


async def test_brackets_jump_replay_segments():
    app = replay_app("sglang_eagle3_restart.log")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        state = app.screen.states[0]
        assert state.stats.current.index == 1
        await pilot.press("left_square_bracket")  # back to the start of segment 0: stats reset, replayed
        await wait_for(pilot, lambda: state.stats.records == 1748 and state.status == "ended")
        assert len(state.stats.segments) == 2


async def test_brackets_pin_segments_in_a_live_pane_and_n_starts_one(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(open(sample("sglang_eagle3_restart.log")).read())
    app = live_app(log, tmp_path)
    messages = []
    async with app.run_test(size=(160, 45), message_hook=messages.append) as pilot:
        screen = app.screen
        state = screen.states[0]
        await wait_for(pilot, lambda: state.stats.records == 1748)
        screen.tick()
        pane = screen.query_one(SourcePane)
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: pane.selected == 0, "pane.selected == 0")
        assert screen.query_one("NumbersPanel").values.segment == 0
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: pane.selected is None, "pane.selected is None")
        await pilot.press("n")
        await wait_for(
            pilot,
            lambda: state.stats.current.reason == "restarted",
            "state.stats.current.reason == 'restarted'",
        )  # no records yet: the new segment is pending
        with open(log, "a") as f:
            f.write(
                "".join(
                    l
                    for l in open(sample("ab_a.log")).read().splitlines(keepends=True)
                    if "Decode batch" in l
                )[:20000]
            )
        await wait_for(pilot, lambda: state.stats.current.index == 2 and state.stats.current.records > 0)
        assert [m.segment for m in unique(messages, RestartMarked)] == [2]


async def test_m_marks_every_pane(tmp_path):
    app = replay_app("ab_a.log", "ab_b.log", save_dir=tmp_path)
    messages = []
    async with app.run_test(size=(160, 45), message_hook=messages.append) as pilot:
        await wait_ended(pilot)
        await pilot.press("m")
        await pilot.press("m")
        screen = app.screen
        assert [m[1] for m in screen.states[0].marks] == [1, 2]
        assert [m[1] for m in screen.states[1].marks] == [1, 2]
        assert [m.number for m in unique(messages, MarkAdded)] == [1, 2]
        assert screen.states[0].raw[-1].kind == "mark"


async def test_s_saves_an_svg_and_says_where(tmp_path):
    app = replay_app("ab_a.log", save_dir=tmp_path)
    messages = []
    async with app.run_test(size=(160, 45), message_hook=messages.append) as pilot:
        await wait_ended(pilot)
        await pilot.press("s")
        await wait_for(pilot, lambda: unique(messages, ScreenshotSaved), "the screenshot saved")
        saved = [m.path for m in unique(messages, ScreenshotSaved)]
        assert len(saved) == 1 and Path(saved[0]).parent == tmp_path
        assert Path(saved[0]).read_text().startswith("<svg")
        assert any(saved[0] in n.message for n in app._notifications)


async def test_e_exports_the_records_as_csv(tmp_path):
    app = replay_app("sglang_eagle3_restart.log", save_dir=tmp_path)
    messages = []
    async with app.run_test(size=(160, 45), message_hook=messages.append) as pilot:
        await wait_ended(pilot)
        await pilot.press("e")
        done = unique(messages, RecordsExported)
        assert len(done) == 1 and done[0].rows == 1748
        rows = list(csv.DictReader(open(done[0].path)))
        assert len(rows) == 1748
        assert {r["segment"] for r in rows} == {"0", "1"}
        state = app.screen.states[0]
        assert [float(r["accept_len"]) for r in rows] == [p.accept_len for p in state.history]
        # The normalised rate is (AL - 1) / D with D from each segment's config (3, then 5).
        r0, r1 = rows[0], rows[-1]
        assert abs(float(r0["accept_rate_normalised"]) - (float(r0["accept_len"]) - 1) / 3) < 1e-5
        assert abs(float(r1["accept_rate_normalised"]) - (float(r1["accept_len"]) - 1) / 5) < 1e-5
        assert any(done[0].path in n.message for n in app._notifications)


async def test_question_mark_help_t_theme_and_q_quits(tmp_path):
    app = replay_app("ab_a.log", save_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        assert app.theme == "specwatch-dark"
        await pilot.press("question_mark")
        await wait_for(
            pilot, lambda: isinstance(app.screen, HelpScreen), "isinstance(app.screen, HelpScreen)"
        )
        await pilot.press("escape")
        await wait_for(
            pilot, lambda: isinstance(app.screen, WatchScreen), "isinstance(app.screen, WatchScreen)"
        )
        await pilot.press("t")
        await wait_for(
            pilot, lambda: isinstance(app.screen, ThemePicker), "isinstance(app.screen, ThemePicker)"
        )
        await pilot.press("down")  # previews the next theme
        await wait_for(
            pilot, lambda: app.theme == "specwatch-high-contrast", "app.theme == 'specwatch-high-contrast'"
        )
        await pilot.press("escape")  # cancel: back to the theme we had
        await wait_for(pilot, lambda: app.theme == "specwatch-dark", "app.theme == 'specwatch-dark'")
        await pilot.press("t", "down", "down", "enter")
        await wait_for(pilot, lambda: app.theme == "specwatch-light", "app.theme == 'specwatch-light'")
        from tui.theming.ui_config import config_dir

        assert json.loads((config_dir() / "tui.json").read_text())["theme"] == "specwatch-light"
        await pilot.press("q")
    assert app.return_code == 0


async def test_theme_is_remembered_next_time(tmp_path):
    from tui.theming.ui_config import save_ui_config

    save_ui_config(theme="specwatch-high-contrast")
    app = replay_app("ab_a.log", save_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        await wait_for(
            pilot, lambda: app.theme == "specwatch-high-contrast", "app.theme == 'specwatch-high-contrast'"
        )


async def test_c_l_and_filter_toggle(tmp_path):
    app = replay_app("ab_a.log", save_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        pane = app.screen.query_one(SourcePane)
        assert not pane.has_class("-no-chart") and not pane.has_class("-no-log")
        await pilot.press("c")
        await wait_for(pilot, lambda: pane.has_class("-no-chart"), "pane.has_class('-no-chart')")
        await pilot.press("l")
        await wait_for(pilot, lambda: pane.has_class("-no-log"), "pane.has_class('-no-log')")
        await pilot.press("slash")  # opens the log tail again, with the filter
        await wait_for(pilot, lambda: not pane.has_class("-no-log"), "not pane.has_class('-no-log')")
        tail = pane.query_one(LogTail)
        await pilot.press(*"prefill", "enter")
        await wait_for(pilot, lambda: tail.filter == "prefill", "tail.filter == 'prefill'")
        await wait_for(
            pilot,
            lambda: tail.shown and all("prefill" in r.text.lower() for r in tail.shown),
            "the lines filtered",
        )
        lines = [r.text for r in tail.shown]
        assert lines and all("prefill" in line.lower() for line in lines)


async def test_command_palette_lists_every_action(tmp_path):
    from tui.screens.keys import ALL_KEYS

    app = replay_app("ab_a.log", save_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for key in ALL_KEYS:
            assert key.title in titles
        actions = {k.action.split("(")[0] for k in ALL_KEYS}
        bound = {b.action.split("(")[0] for b in WatchScreen.BINDINGS} | {b.action for b in app.BINDINGS}
        assert bound == actions
        # Running one from the palette does it.
        cmd = next(c for c in app.get_system_commands(app.screen) if c.title == "Add a mark")
        cmd.callback()
        await pilot.pause()
        await pilot.pause()
        await wait_for(pilot, lambda: app.screen.marks == 1, "app.screen.marks == 1")
