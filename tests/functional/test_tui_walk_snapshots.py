"""Every row used and a time axis to walk (issue 31, items 6 and 7): SVG snapshots at 80×24,
100×30, 160×45 and 200×60 of a compare of ``blue/server.log`` and ``green/server.log`` (same
file name, other directories), a 12-file grid whose names differ only in the middle, an ended
compare after ``n``, ``o`` and ``z`` in a compare, the overlay with a restart gap, and a panned
chart window. Small logs (a few hundred lines each, cut from the samples), replayed to their end.

The apps are made as ``specwatch replay --max FILE…`` makes them (its parser and plan), so the
pane labels are the command's: when the path-aware labels (``blue/server.log``) land, these
pictures change with them — regenerate with ``--snapshot-update`` after such a deliberate change,
and look at the pictures before committing them. Each test also asserts on the screen's text:
no "no room" where there are rows, the overlay's legend and axis on the screen."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from _tui_util import ROOT, _isolated_config, finished, screen_text, wait_charts, wait_for  # noqa: F401

from tui.app import SpecwatchApp
from tui.cli import build_parser
from tui.cli.tui_commands import _replay_plan
from tui.widgets.history_chart import HistoryChart
from tui.widgets.source_pane import SourcePane

if importlib.util.find_spec("pytest_textual_snapshot") is None:
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError("pytest-textual-snapshot is required in CI (pip install pytest-textual-snapshot)")
    pytest.skip("pytest-textual-snapshot is not installed", allow_module_level=True)

SIZES = [(80, 24), (100, 30), (160, 45), (200, 60)]
IDS = [f"{w}x{h}" for w, h in SIZES]
NODE = "eagle3-llama3.1-8b-node{:02d}-tp8.log"  # 12 names that differ only in the middle
SAMPLES = ROOT / "sample_logs"


def lines_of(name: str, *ranges: tuple[int, int]) -> str:
    """Lines ``a..b`` (1-based, inclusive) of a sample log, for each range, as one text."""
    lines = (SAMPLES / name).read_text().splitlines(keepends=True)
    return "".join("".join(lines[a - 1 : b]) for a, b in ranges)


def write(tmp_path: Path, rel: str, text: str) -> None:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def replay(tmp_path: Path, monkeypatch, *files: str) -> SpecwatchApp:
    """``specwatch replay --max FILES`` in ``tmp_path`` (relative paths: the same in any checkout)."""
    monkeypatch.chdir(tmp_path)
    return SpecwatchApp(_replay_plan(build_parser().parse_args(["replay", "--max", *files])))


def blue_green(tmp_path: Path, monkeypatch) -> SpecwatchApp:
    write(tmp_path, "blue/server.log", lines_of("ab_a.log", (1, 1500)))
    write(tmp_path, "green/server.log", lines_of("ab_b.log", (1, 1500)))
    return replay(tmp_path, monkeypatch, "blue/server.log", "green/server.log")


async def settled(pilot) -> str:
    """The picture steady (every chart drawn, the toasts gone): the screen's text."""
    pilot.app.screen.tick()
    await pilot.pause()
    await wait_charts(pilot)
    pilot.app.clear_notifications()
    await pilot.pause()
    return screen_text(pilot.app)


def overlay_drawn(app, text: str) -> None:
    """The overlay chart is on the screen with its legend row, and nothing says "no room"."""
    overlay = app.screen.query_one("#overlay", HistoryChart)
    assert overlay.display and overlay.size.height >= 2, (overlay.size, text)
    assert "⣿⣿ A" in text and "⣿⣿ B" in text and "no room" not in text, (overlay.size, overlay.region, text)
    box = app.screen.query_one("#overlay-box")
    assert box.region.bottom == app.screen.region.bottom - 1, text  # the rows to the footer are its


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_walk_compare_of_same_names_in_two_directories(snap_compare, tmp_path, monkeypatch, size):
    seen: list[str] = []

    async def done(pilot):
        await finished(pilot)
        seen.append(await settled(pilot))
        overlay_drawn(pilot.app, seen[0])

    assert snap_compare(blue_green(tmp_path, monkeypatch), terminal_size=size, run_before=done)
    assert "x: time by the logs" in seen[0]  # cut with … at 80 columns


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_walk_grid_of_twelve_names_that_differ_in_the_middle(snap_compare, tmp_path, monkeypatch, size):
    names = [NODE.format(i) for i in range(1, 13)]
    for name in names:
        write(tmp_path, name, lines_of("ab_a.log", (1, 400)))
    seen: list[str] = []

    async def done(pilot):
        await finished(pilot)
        seen.append(await settled(pilot))

    assert snap_compare(replay(tmp_path, monkeypatch, *names), terminal_size=size, run_before=done)
    assert "node01" in seen[0]


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_walk_ended_compare_after_n(snap_compare, tmp_path, monkeypatch, size):
    seen: list[str] = []

    async def after_n(pilot):
        await finished(pilot)
        pane = pilot.app.screen.query(SourcePane).first()
        await pilot.press("n")
        await wait_for(pilot, lambda: pane.state.stats.current.index == 1, "segment 1 opened by n")
        await finished(pilot)
        seen.append(await settled(pilot))
        overlay_drawn(pilot.app, seen[0])  # drawn a moment before: drawn still

    assert snap_compare(blue_green(tmp_path, monkeypatch), terminal_size=size, run_before=after_n)


@pytest.mark.parametrize("key", ["o", "z"])
@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_walk_o_and_z_in_a_compare(snap_compare, tmp_path, monkeypatch, size, key):
    seen: list[str] = []

    async def pressed(pilot):
        await finished(pilot)
        screen = pilot.app.screen
        panes = list(screen.query(SourcePane))
        await pilot.press(key)
        if key == "o":  # the rows to the panes, each with its chart
            await wait_for(pilot, lambda: screen.has_class("-tall-panes") and not screen.overlay, "o")
        else:  # the focused pane and its chart fill the screen
            await wait_for(pilot, lambda: screen.maximized is panes[0] and panes[0].chart_shown, "z")
        await finished(pilot)
        seen.append(await settled(pilot))
        if key == "z":
            assert panes[0].region.bottom == screen.region.bottom - 1  # the screen down to the footer
        else:
            assert all(p.region.bottom == screen.region.bottom - 1 for p in panes)  # down to the footer

    assert snap_compare(blue_green(tmp_path, monkeypatch), terminal_size=size, run_before=pressed)
    assert "no room" not in seen[0] or size == (80, 24), seen[0]


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_walk_overlay_with_a_restart_gap(snap_compare, tmp_path, monkeypatch, size):
    # A: the first run, a restart (7 minutes down), the second; B: the second run alone
    write(tmp_path, "restarted.log", lines_of("sglang_eagle3_restart.log", (1, 500), (1724, 2200)))
    write(tmp_path, "steady.log", lines_of("sglang_eagle3_restart.log", (1724, 2400)))
    seen: list[str] = []

    async def done(pilot):
        await finished(pilot)
        seen.append(await settled(pilot))
        overlay_drawn(pilot.app, seen[0])

    app = replay(tmp_path, monkeypatch, "restarted.log", "steady.log")
    assert snap_compare(app, terminal_size=size, run_before=done)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_walk_a_panned_window(snap_compare, tmp_path, monkeypatch, size):
    write(tmp_path, "run.log", lines_of("sglang_eagle3_restart.log", (1724, 2400)))  # 09:09:21–09:13:10
    seen: list[str] = []

    async def panned(pilot):
        await finished(pilot)
        pane = pilot.app.screen.query_one(SourcePane)
        await pilot.press("l")  # the log tail off: the rows are the chart's
        await pilot.press(*["greater_than_sign"] * 4)  # the last minute
        await pilot.press("left_curly_bracket", "left_curly_bracket")  # a minute back
        await wait_for(pilot, lambda: pane.pan_end is not None, "the window panned back")
        await finished(pilot)
        seen.append(await settled(pilot))

    assert snap_compare(replay(tmp_path, monkeypatch, "run.log"), terminal_size=size, run_before=panned)
    assert "09:11:10–09:12:10 by the log's clock, panned" in "".join(seen[0].split("\n")), seen[0]
