"""The fleet row's log over SSH (the real OpenSSH sshd of tests/conftest.py): with
``logs = "logbox:<dir>/{instance_host}.log"`` in [fleet], Enter on a row opens its series and,
beside it, the log of that row's host read over SSH, with the same numbers ``summary`` gives for
the file."""

from __future__ import annotations

import shutil
from pathlib import Path

from _fleet_util import STEP, FakePrometheus
from _tui_util import _isolated_config, wait_for  # noqa: F401

from tui.app import SpecwatchApp
from tui.core.fleet.fetch import FleetQuery
from tui.core.pipeline.whole import summarize_file
from tui.panes.fleet import FleetPlan
from tui.panes.launch import LaunchPlan
from tui.screens.fleet import FleetScreen, InstanceScreen

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "vllm_v1_eagle3.log"


async def test_enter_opens_the_rows_log_over_ssh(home, tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    for i in range(1, 5):
        shutil.copy(SAMPLE, d / f"gpu-node{i:02d}.cluster.local.log")
    want = summarize_file(str(SAMPLE), SAMPLE.name, workers=1).stats
    fake = FakePrometheus(vllm=4, sglang=0)
    plan = FleetPlan(
        "http://prom.test:9090",
        FleetQuery(window=60 * STEP, step=STEP),
        transport=fake.transport(),
        refresh=3600,
        logs="logbox:" + str(d) + "/{instance_host}.log",
    )
    app = SpecwatchApp(LaunchPlan([], title="specwatch fleet", fleet=plan), remember_theme=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(
            pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.refreshes >= 1, "rows"
        )
        await pilot.press("home", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, InstanceScreen), "the instance's panes")
        screen = app.screen
        assert isinstance(screen, InstanceScreen)
        await wait_for(pilot, lambda: len(screen.states) == 2, "the series and the log")
        log = screen.states[1]
        await wait_for(pilot, lambda: log.stats.records >= want.records, "the log read over SSH")
        got = log.stats.total.pooled_len
        assert got.numerator == want.total.pooled_len.numerator
        assert got.denominator == want.total.pooled_len.denominator
        assert "gpu-node04" in log.label  # the row picked is the worst (node04), its own host's log
