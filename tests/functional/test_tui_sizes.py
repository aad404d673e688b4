"""The screen at every size: SVG snapshots of watch (one source), compare (two files whose names
differ only at the end) and the demo at 80×24, 100×30 and 160×45, each a finished replay (fixed
files, replayed to their end: deterministic). Regenerate with ``--snapshot-update`` after a
deliberate change, and look at the pictures before committing them."""

from __future__ import annotations

import importlib.util
import os

import pytest
from _tui_util import ROOT, _isolated_config, finished, sample, wait_ended  # noqa: F401

from tui.app import SpecwatchApp
from tui.panes.launch import LaunchPlan, demo_plan, replay_pane

if importlib.util.find_spec("pytest_textual_snapshot") is None:
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError("pytest-textual-snapshot is required in CI (pip install pytest-textual-snapshot)")
    pytest.skip("pytest-textual-snapshot is not installed", allow_module_level=True)

SIZES = [(80, 24), (100, 30), (160, 45)]
LONG = "sglang-eagle3-llama-3.1-8b-instruct-tp2-run-"  # two runs whose names differ only at the end


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def watch_app() -> SpecwatchApp:
    return SpecwatchApp(LaunchPlan([replay_pane("sample_logs/sglang_eagle3_restart.log", None, speed=None)]))


def compare_app() -> SpecwatchApp:
    panes = [
        replay_pane(sample(f), f"{LONG}{end}.log", speed=None, where=f"replay of {LONG}{end}.log")
        for f, end in (("ab_a.log", "broken"), ("ab_b.log", "fixed"))
    ]
    return SpecwatchApp(LaunchPlan(panes, compare=True))


def demo_app() -> SpecwatchApp:
    plan = demo_plan()
    # the demo's own two panes and title, replayed at full speed to their end (a stable picture)
    plan.panes = [replay_pane(p.path or "", p.label, speed=None, where=p.where) for p in plan.panes]
    return SpecwatchApp(plan)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_watch_at_size(snap_compare, size):
    assert snap_compare(watch_app(), terminal_size=size, run_before=finished)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_compare_at_size(snap_compare, size):
    assert snap_compare(compare_app(), terminal_size=size, run_before=finished)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_demo_at_size(snap_compare, size):
    assert snap_compare(demo_app(), terminal_size=size, run_before=finished)
