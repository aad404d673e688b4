"""Jumps during a replay move within what was read (issue 31, item 2): after ``[`` (the file is read
again from its start, the statistics start over) and ``]`` the log tail holds every line once,
the line count is the file's, a line found by ``ctrl+f`` is found once, and ``g`` lands on it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from _tui_util import ROOT, _isolated_config, wait_for  # noqa: F401

from tui.app import SpecwatchApp
from tui.core.sources.replay import ReplaySource
from tui.panes.launch import LaunchPlan, PaneSpec
from tui.widgets.log_tail import LogTail
from tui.widgets.source_pane import SourcePane

UNIQUE = "#token: 18468,"  # in one line of the small log (line 294)


def small_log(tmp_path: Path) -> Path:
    """Two runs of the sample (a restart at line 301): 601 lines."""
    lines = (ROOT / "sample_logs" / "sglang_eagle3_restart.log").read_text().splitlines(keepends=True)
    path = tmp_path / "two-runs.log"
    path.write_text("".join(lines[:300] + lines[1723:2024]))
    return path


def paused_replay(path: Path) -> tuple[SpecwatchApp, list[ReplaySource]]:
    """The app on a replay that starts paused (the test moves its playhead)."""
    made: list[ReplaySource] = []

    def opener() -> ReplaySource:
        src = ReplaySource(str(path), path.name, speed=None, stay_open=True, paused=True)
        made.append(src)
        return src

    pane = PaneSpec(path.name, f"replay of {path.name}", opener, True, str(path))
    return SpecwatchApp(LaunchPlan([pane])), made


def numbered(pane: SourcePane) -> list[int]:
    return [r.line_no for r in pane.state.raw if r.line_no is not None]


async def test_a_jump_back_during_a_replay_puts_no_line_in_the_tail_twice(tmp_path):
    path = small_log(tmp_path)
    total = len(path.read_text().splitlines())
    app, made = paused_replay(path)
    async with app.run_test(size=(140, 40)) as pilot:
        pane = app.screen.query_one(SourcePane)
        st = pane.state
        await wait_for(pilot, lambda: bool(made) and st.status == "live", "the replay opened")
        src = made[0]
        src.step(450)  # past the restart: the playhead in segment 1
        await wait_for(pilot, lambda: st.lines == 450 and st.stats.current.index == 1, "450 lines read")
        await pilot.press("left_square_bracket")  # back to segment 0: read again from the start
        await wait_for(pilot, lambda: st.lines == 0 and not src.seeking, "the jump back")
        await pilot.press("right_square_bracket")  # forward to segment 1: the lines before it, fast
        await wait_for(pilot, lambda: st.lines == 300 and not src.seeking, "the jump forward")
        assert numbered(pane) == list(range(1, 301))
        src.set_speed(None)
        src.resume()
        await wait_for(pilot, lambda: st.status == "ended", "the end")
        nos = numbered(pane)
        assert st.lines == total
        assert nos == list(range(1, total + 1)), [n for n, k in Counter(nos).items() if k > 1][:5]
        events = [r.text for r in st.raw if r.line_no is None]
        assert sum("seek" in t for t in events) == 2, events  # the jumps are said in the tail, once each
        pane.focus()
        await pilot.press("ctrl+f", *UNIQUE, "enter")
        tail = pane.query_one(LogTail)
        await wait_for(pilot, lambda: tail.search == UNIQUE.lower(), "the search taken")
        found = [r for r in st.raw if UNIQUE.lower() in r.text.lower()]
        assert len(found) == 1
        assert pane.find(1) is None  # no older copy of it
        stamp = found[0].text[12:20]  # its time of day: g goes to the first line at it, kept once
        first = [r.line_no for r in st.raw if r.line_no is not None and r.text[12:20] == stamp][0]
        line, _ = tail.goto(st.raw, stamp)
        assert line is not None and line.line_no == first
