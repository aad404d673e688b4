"""SVG snapshots of finished replays (deterministic: the files are fixed and the replay is at
its end). Regenerate with ``pytest tests/test_tui_snapshots.py --snapshot-update`` after a
deliberate change, and look at the report before committing the new SVGs."""

from __future__ import annotations

import importlib.util
import os

import pytest
from _tui_util import ROOT, _isolated_config, finished, replay_app, wait_ended  # noqa: F401

if importlib.util.find_spec("pytest_textual_snapshot") is None:
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError("pytest-textual-snapshot is required in CI (pip install pytest-textual-snapshot)")
    pytest.skip("pytest-textual-snapshot is not installed", allow_module_level=True)


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # paths are shown relative to the current directory


def test_snapshot_single_replay(snap_compare):
    # A relative path: the end-of-file event names it, and it must not depend on the checkout.
    assert snap_compare(
        replay_app("sample_logs/sglang_eagle3_restart.log"), terminal_size=(160, 45), run_before=finished
    )


def test_snapshot_compare_replay(snap_compare):
    assert snap_compare(replay_app("ab_a.log", "ab_b.log"), terminal_size=(160, 45), run_before=finished)


def test_snapshot_help(snap_compare):
    async def help_open(pilot):
        await finished(pilot)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(replay_app("ab_a.log"), terminal_size=(160, 45), run_before=help_open)
