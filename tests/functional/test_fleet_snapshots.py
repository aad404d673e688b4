"""SVG snapshots of the fleet screen at 80×24 (a compact table) and 160×45, on a fixed fleet
answered in process (tests/_fleet_util.py). Regenerate with ``--snapshot-update`` after a
deliberate change, and look at the SVGs before committing them."""

from __future__ import annotations

import importlib.util
import os

import pytest
from _fleet_util import STEP, FakePrometheus
from _tui_util import _isolated_config, wait_for  # noqa: F401

from tui.app import SpecwatchApp
from tui.core.fleet.fetch import FleetQuery
from tui.panes.fleet import FleetPlan
from tui.panes.launch import LaunchPlan
from tui.screens.fleet import FleetScreen

if importlib.util.find_spec("pytest_textual_snapshot") is None:
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError("pytest-textual-snapshot is required in CI (pip install pytest-textual-snapshot)")
    pytest.skip("pytest-textual-snapshot is not installed", allow_module_level=True)


def app_of(n: int) -> SpecwatchApp:
    fake = FakePrometheus(vllm=n, sglang=2)
    plan = FleetPlan(
        "http://prom.test:9090",
        FleetQuery(window=60 * STEP, step=STEP, group_by=("group",)),
        transport=fake.transport(),
        refresh=3600,
    )
    return SpecwatchApp(LaunchPlan([], title="specwatch fleet", fleet=plan), remember_theme=False)


async def refreshed(pilot) -> None:
    app = pilot.app
    await wait_for(
        pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.refreshes >= 1, "a refresh"
    )
    await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
def test_snapshot_fleet(snap_compare, size):
    assert snap_compare(app_of(16), terminal_size=size, run_before=refreshed)
