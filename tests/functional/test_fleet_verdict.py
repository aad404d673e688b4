"""The canary verdict of ``--compare A B`` on the fleet screen (not only in --table / --json): the
question it answers, B − A with its interval, n and the window, in the status line."""

from __future__ import annotations

import re

from _fleet_util import STEP, FakePrometheus
from _tui_util import _isolated_config, screen_text, wait_for  # noqa: F401

from tui.app import SpecwatchApp
from tui.core.fleet.fetch import FleetQuery
from tui.panes.fleet import FleetPlan
from tui.panes.launch import LaunchPlan
from tui.screens.fleet import FleetScreen


async def test_the_canary_verdict_is_on_screen():
    fake = FakePrometheus(vllm=8, sglang=0)
    fq = FleetQuery(window=60 * STEP, step=STEP, compare=('group="stable"', 'group="canary"'))
    plan = FleetPlan("http://prom.test:9090", fq, transport=fake.transport(), refresh=3600)
    app = SpecwatchApp(LaunchPlan([], title="specwatch fleet", fleet=plan), remember_theme=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(
            pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.refreshes >= 1, "a refresh"
        )
        assert isinstance(app.screen, FleetScreen)
        c = app.screen.view.fleet.comparison
        assert c is not None and c["question"] == "these servers over this window"

        def shown() -> str:
            return " ".join(screen_text(app).split())

        await wait_for(pilot, lambda: "(these servers over this window)" in shown(), "the verdict drawn")
        text = shown()
        assert 'canary group="canary" − group="stable" (these servers over this window)' in text
        assert re.search(r"n = 4\+4 servers, 6\d\+6\d steps, 30m to 14:00:00Z", text), text
        assert c["verdict"].replace("_", " ") in text
