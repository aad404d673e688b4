"""SVG snapshots of finished replays (deterministic: the files are fixed and the replay is at
its end). Regenerate with ``pytest tests/test_tui_snapshots.py --snapshot-update`` after a
deliberate change, and look at the report before committing the new SVGs."""

from __future__ import annotations

import importlib.util
import os
import re

import pytest
from _tui_util import (  # noqa: F401
    ROOT,
    _isolated_config,
    finished,
    replay_app,
    screen_text,
    wait_charts,
    wait_ended,
)

if importlib.util.find_spec("pytest_textual_snapshot") is None:
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError("pytest-textual-snapshot is required in CI (pip install pytest-textual-snapshot)")
    pytest.skip("pytest-textual-snapshot is not installed", allow_module_level=True)


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # paths are shown relative to the current directory


# One finished replay at 160x45 and the help over it: the same pictures (byte for byte) as
# test_tui_sizes.py's test_snapshot_watch_at_size[160x45] and test_tui_glance.py's
# test_glance_help[160x45], which check them.


def test_snapshot_compare_replay(snap_compare):
    assert snap_compare(replay_app("ab_a.log", "ab_b.log"), terminal_size=(160, 45), run_before=finished)


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 45), (200, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_chart_wall_clock_ticks(snap_compare, size):
    """The history chart (plotext) of a log with timestamps, maximised (z): its x axis is the
    log's own clock, wall-clock ticks (09:05, 09:10, …), at each size with its axes whole."""

    async def zoomed(pilot):
        await finished(pilot)
        await pilot.press("z")
        await wait_charts(pilot)
        pilot.app.clear_notifications()
        pilot.app.screen.tick()
        await pilot.pause()
        text = screen_text(pilot.app)
        # the x axis's tick row: wall-clock HH:MM ticks only (a log line's time has seconds)
        assert re.search(r"^│?\s*(?:09:[0-5]\d\s*){2,}│?$", text, re.MULTILINE), text
        assert "x: time by the log's clock" in text

    assert snap_compare(
        replay_app("sample_logs/sglang_eagle3_restart.log"), terminal_size=size, run_before=zoomed
    )
