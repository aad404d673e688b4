"""From a fleet row to its evidence: Enter opens the instance's own series (its history from
Prometheus, a pane) and, with ``logs`` in [fleet], its log in a pane beside it (here a local path
from the row's labels; over SSH to a real sshd in tests/integration/test_fleet_logs_sshd.py);
labels that cannot fill the template safely give a warning and no log pane; a down row says so.
Snapshots of the two panes at 100×30 and 160×45."""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
from pathlib import Path

import pytest
from _fleet_util import STEP, FakePrometheus
from _tui_util import _isolated_config, notifications, wait_charts, wait_for  # noqa: F401

from tui.app import SpecwatchApp
from tui.core.fleet.fetch import FleetQuery
from tui.core.fleet.logs import LogSpecError, log_spec
from tui.panes.fleet import FleetPlan
from tui.panes.launch import LaunchPlan
from tui.screens.fleet import FleetScreen, InstanceScreen

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "vllm_v1_eagle3.log"


def app_of(logs: str | None, vllm: int = 6, follow_logs: bool = True) -> SpecwatchApp:
    fake = FakePrometheus(vllm=vllm, sglang=0)
    plan = FleetPlan(
        "http://prom.test:9090",
        FleetQuery(window=60 * STEP, step=STEP),
        transport=fake.transport(),
        refresh=3600,
        logs=logs,
        follow_logs=follow_logs,
    )
    return SpecwatchApp(LaunchPlan([], title="specwatch fleet", fleet=plan), remember_theme=False)


def logs_dir(tmp_path: Path) -> Path:
    d = tmp_path / "logs"
    d.mkdir()
    for i in range(1, 7):
        shutil.copy(SAMPLE, d / f"gpu-node{i:02d}.cluster.local.log")
    return d


async def opened(pilot, want_panes: int) -> InstanceScreen:
    app = pilot.app
    await wait_for(
        pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.refreshes >= 1, "a refresh"
    )
    await pilot.press("home", "enter")
    await wait_for(pilot, lambda: isinstance(app.screen, InstanceScreen), "the instance's panes")
    screen = app.screen
    assert isinstance(screen, InstanceScreen)
    await wait_for(pilot, lambda: len(screen.states) == want_panes, "its panes")
    await wait_for(pilot, lambda: screen.states[0].stats.records >= 59, "the instance's history")
    if want_panes == 2:
        await wait_for(pilot, lambda: screen.states[1].stats.records >= 305, "the instance's log, whole")
    return screen


def test_the_log_template_takes_the_row_labels_and_refuses_unsafe_ones():
    labels = {"instance": "gpu-node04.cluster.local:8000", "job": "vllm"}
    assert (
        log_spec("{instance_host}:/var/log/sglang/*.log", labels)
        == "gpu-node04.cluster.local:/var/log/sglang/*.log"
    )
    assert (
        log_spec("ops@{instance_host}:/logs/{job}.log", labels)
        == "ops@gpu-node04.cluster.local:/logs/vllm.log"
    )
    assert log_spec("[{instance_host}]:/l.log", {"instance": "[::1]:80"}) == "[::1]:/l.log"
    for bad in (
        {"instance": "evil;rm -rf /:80", "job": "v"},
        {"instance": "-oProxyCommand=x:80", "job": "v"},
        {"instance": "h:80", "job": "../../etc/passwd"},
        {"instance": "h:80", "job": "a\x1b[2J"},
        {"instance": "h:80"},
    ):
        with pytest.raises(LogSpecError):
            log_spec("{instance_host}:/logs/{job}.log", bad)


async def test_enter_opens_the_series_and_the_log_beside_it(tmp_path):
    d = logs_dir(tmp_path)
    app = app_of(str(d) + "/{instance_host}.log")
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await opened(pilot, 2)
        series, log = screen.states
        assert series.stats.current.all.accept_len.mean is not None  # the row's own series
        assert log.stats.records > 100 and log.stats.current.all.accept_len.mean is not None
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, FleetScreen), "back to the fleet")


async def test_labels_that_cannot_fill_the_template_give_a_warning_and_the_series_alone(tmp_path):
    app = app_of(str(tmp_path) + "/{draft_model}.log")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot, 1)
        assert len(screen.states) == 1
        await wait_for(pilot, lambda: any("no log pane" in n for n in notifications(app)), "the warning")


if importlib.util.find_spec("pytest_textual_snapshot") is None and os.environ.get("CI", "").lower() == "true":
    raise RuntimeError("pytest-textual-snapshot is required in CI (pip install pytest-textual-snapshot)")


@pytest.mark.skipif(importlib.util.find_spec("pytest_textual_snapshot") is None, reason="no snapshot plugin")
@pytest.mark.parametrize("size", [(100, 30), (160, 45)])
def test_snapshot_drilldown(snap_compare, size, tmp_path, monkeypatch):
    logs_dir(tmp_path)
    monkeypatch.chdir(tmp_path)  # a relative path: the picture does not hold the test's tmp dir
    # the picture of a drill-down just opened: the series pane's header says "live", never "live ·
    # 7 s old" on a machine slow enough to take that long to the picture (the age is
    # test_labels'/test_state's)
    from tui.panes import state

    monkeypatch.setattr(state, "LIVE_QUIET_S", math.inf)

    async def run_before(pilot) -> None:
        screen = await opened(pilot, 2)
        await wait_for(pilot, lambda: screen.states[1].status.value == "ended", "the log read to its end")
        pilot.app.clear_notifications()
        await wait_charts(pilot)

    # the log read once (not followed): its header says "ended", not an age that grows by the day
    app = app_of("logs/{instance_host}.log", follow_logs=False)
    assert snap_compare(app, terminal_size=size, run_before=run_before)


async def test_a_past_window_opens_the_history_of_that_window_read_once():
    """With --end in the past, Enter reads the instance's history of that window (ending where
    the fleet's window ends) and does not follow it."""
    fake = FakePrometheus(vllm=4, sglang=0)
    fq = FleetQuery(window=30 * STEP, step=STEP, end_ago=30 * STEP)
    plan = FleetPlan("http://prom.test:9090", fq, transport=fake.transport(), refresh=3600)
    app = SpecwatchApp(LaunchPlan([], title="specwatch fleet", fleet=plan), remember_theme=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(
            pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.refreshes >= 1, "rows"
        )
        fleet_end = app.screen.view.fleet.end
        await pilot.press("home", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, InstanceScreen), "the instance's pane")
        screen = app.screen
        await wait_for(pilot, lambda: screen.states and screen.states[0].status.value == "ended", "read once")
        st = screen.states[0]
        assert 25 <= st.stats.records <= 32
        assert st.source.end == fleet_end and not st.source.follow
