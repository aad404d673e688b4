"""The glance at every size (issue 20): SVG snapshots at 80×24, 100×30, 160×45 and 200×60 of a
compare of two logs whose last line is days old (live: the headers say how old, and which pane is
A and which B), grids of 8 and 16 sources whose names differ only in the middle
(``eagle3-llama3.1-8b-node01-tp8.log`` …), and the help. Each also asserts on the text: every
header shows the part of its label that tells it apart, and the status is whole.

The wall clock of the panes is fixed (11 days after the logs' last line), so "11 d old" stays
true whatever day the test runs. Regenerate with ``--snapshot-update`` after a deliberate change,
and look at the pictures before committing them."""

from __future__ import annotations

import importlib.util
import os
import re
import time
import types
from pathlib import Path

import pytest
from _tui_util import (  # noqa: F401
    ROOT,
    _isolated_config,
    finished,
    screen_text,
    short_samples,
    wait_charts,
    wait_for,
)

from tui.app import SpecwatchApp
from tui.core.sources.lines import START
from tui.core.sources.spec import parse_source_spec
from tui.panes import state as pane_state
from tui.panes.launch import LaunchPlan, live_panes, replay_pane
from tui.widgets.pane_header import PaneHeader
from tui.widgets.source_pane import SourcePane

if importlib.util.find_spec("pytest_textual_snapshot") is None:
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError("pytest-textual-snapshot is required in CI (pip install pytest-textual-snapshot)")
    pytest.skip("pytest-textual-snapshot is not installed", allow_module_level=True)

SIZES = [(80, 24), (100, 30), (160, 45), (200, 60)]
IDS = [f"{w}x{h}" for w, h in SIZES]
NODE = "eagle3-llama3.1-8b-node{:02d}-tp8.log"
# 11 days and 5 minutes after the logs' last line (2026-11-20 12:19:46, as the logs print it)
NOW = time.mktime((2026, 12, 1, 12, 24, 46, 0, 0, -1))


@pytest.fixture
def fixed_wall(monkeypatch):
    """The panes' wall clock stands still at ``NOW`` (monotonic time runs as usual)."""
    fake = types.SimpleNamespace(time=lambda: NOW, monotonic=time.monotonic, perf_counter=time.perf_counter)
    monkeypatch.setattr(pane_state, "time", fake)


def headers(app) -> list[str]:
    """What each pane header on the screen shows (its parts as the label policy chose them),
    checked against the screen's own text (the SVG's, where runs of spaces are dropped)."""
    screen = app.screen
    shown = [p.query_one(PaneHeader).shown for p in screen.query(SourcePane) if screen.on_screen(p)]
    flat = "".join(screen_text(app).split())
    for h in shown:
        assert "".join(h.split()) in flat, (h, screen_text(app))
    return shown


def compare_app(tmp_path: Path, monkeypatch) -> SpecwatchApp:
    monkeypatch.chdir(tmp_path)
    for name in ("ab_a.log", "ab_b.log"):
        (tmp_path / name).write_bytes((ROOT / "sample_logs" / name).read_bytes())
    panes = live_panes(
        [parse_source_spec(n) for n in ("ab_a.log", "ab_b.log")],
        follow=True,
        start=START,
        options={"idle_after": None, "poll_interval": 0.05, "use_inotify": False},
    )
    return SpecwatchApp(LaunchPlan(panes, compare=True, title="specwatch compare: ab_a.log · ab_b.log"))


def grid_app(tmp_path: Path, monkeypatch, n: int) -> SpecwatchApp:
    monkeypatch.chdir(tmp_path)
    names = [NODE.format(i) for i in range(1, n + 1)]
    # the first 400 lines of a sample (141 records): the names are the point, and each
    # pane still has its numbers, sparklines and chart
    (short,) = short_samples(tmp_path, "ab_a.log")
    data = Path(short).read_bytes()
    for name in names:
        (tmp_path / name).write_bytes(data)
    panes = [replay_pane(name, None, speed=None, where=f"replay of {name}") for name in names]
    return SpecwatchApp(LaunchPlan(panes, title=f"specwatch replay: {n} nodes"))


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_glance_compare_of_old_logs(snap_compare, tmp_path, monkeypatch, fixed_wall, size):
    seen: list[str] = []
    heads: list[str] = []

    async def read_whole(pilot):
        screen = pilot.app.screen
        lines = [len((tmp_path / n).read_bytes().splitlines()) for n in ("ab_a.log", "ab_b.log")]
        await wait_for(pilot, lambda: [s.lines for s in screen.states] == lines, "both files read")
        await wait_for(pilot, lambda: all(s.status == "live" for s in screen.states), "both live")
        screen.tick()
        await pilot.pause()
        await wait_charts(pilot)
        pilot.app.clear_notifications()
        screen.tick()
        await pilot.pause()
        seen.append(screen_text(pilot.app))
        heads.extend(headers(pilot.app))

    assert snap_compare(compare_app(tmp_path, monkeypatch), terminal_size=size, run_before=read_whole)
    assert len(heads) == 2, seen[0]
    assert heads[0].startswith("● A ab_a.log") and heads[1].startswith("● B ab_b.log"), heads
    for h in heads:  # the status whole: its long form or its short one
        assert h.endswith(("live (last line 11 d ago, by the log's clock)", "live · 11 d old")), h
    assert "B − A" in seen[0] and "…" not in "".join(heads)
    flat = "".join(seen[0].split())
    # the throughput line whole at every size: its interval and verdict, or, when insufficient,
    # its advice on how many records to wait for
    whole = r"throughputB/A[\d.]+×\(95%CI[\d.]+…[\d.]+\):[a-z]+|throughput[^│]*insufficient[^│]*A[^│]*~[\d,]+morerecords"
    assert re.search(whole, flat), seen[0]


@pytest.mark.parametrize("n", [8, 16])
@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_glance_grid_of_look_alike_names(snap_compare, tmp_path, monkeypatch, size, n):
    seen: list[str] = []
    heads: list[str] = []

    async def done(pilot):
        await finished(pilot)
        seen.append(screen_text(pilot.app))
        heads.extend(headers(pilot.app))

    assert snap_compare(grid_app(tmp_path, monkeypatch, n), terminal_size=size, run_before=done)
    assert heads, seen[0]
    assert len(set(heads)) == len(heads), heads  # every header distinct
    for h in heads:
        m = re.search(r"node(\d\d)", h)
        assert m is not None and 1 <= int(m.group(1)) <= n, h  # the part that differs, whole
        assert h.endswith("ended"), h


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_glance_help(snap_compare, monkeypatch, size):
    monkeypatch.chdir(ROOT)
    seen: list[str] = []

    async def help_open(pilot):
        await finished(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        pilot.app.notify("a toast that must wait")  # held while the help is open
        await pilot.pause()
        seen.append(screen_text(pilot.app))

    app = SpecwatchApp(LaunchPlan([replay_pane("sample_logs/ab_a.log", None, speed=None)]))
    assert snap_compare(app, terminal_size=size, run_before=help_open)
    assert "## Keys" not in seen[0] and "Keys" in seen[0] and "a toast that must wait" not in seen[0]


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_glance_overlay_with_the_log_tails_on(snap_compare, monkeypatch, size):
    """The compare of two ended replays with `l` pressed: the log tails show in the panes with the
    overlay chart, or the screen says where there was no room (the pane's border, `l`'s words, the
    bar's note on the overlay); never blank rows."""
    from _tui_util import replay_app

    monkeypatch.chdir(ROOT)
    seen: list[str] = []

    async def logs_on(pilot):
        await finished(pilot)
        await pilot.press("l")
        panes = list(pilot.app.screen.query(SourcePane))
        await wait_for(
            pilot, lambda: all(p.log_shown or p.has_class("-no-log-room") for p in panes), "l applied"
        )
        await wait_charts(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()
        seen.append(screen_text(pilot.app))
        seen.append(" ".join(str(p.border_subtitle or "") for p in panes))

    app = replay_app("sample_logs/ab_a.log", "sample_logs/ab_b.log")  # relative: the same in any checkout
    assert snap_compare(app, terminal_size=size, run_before=logs_on)
    text, borders = seen
    assert "Decode batch" in text or "log" in borders, (text, borders)  # shown, or said hidden
