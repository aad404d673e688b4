"""The fleet screen driven with Pilot against a Prometheus API answered in process: rows for every
instance (worst first), sort / filter / group keys, a bad filter said, labels made visible, and
Enter opening the usual pane of one instance fed by its history from Prometheus (Escape back)."""

from __future__ import annotations

from _fleet_util import STEP, FakePrometheus
from _tui_util import _isolated_config, screen_text, wait_for  # noqa: F401

from tui.app import SpecwatchApp
from tui.core.fleet.fetch import FleetQuery
from tui.panes.fleet import FleetPlan
from tui.panes.launch import LaunchPlan
from tui.screens.fleet import FleetScreen, InstanceScreen
from tui.widgets.fleet_table import FleetTable


def fleet_app(fake: FakePrometheus, **query) -> SpecwatchApp:
    fq = FleetQuery(window=60 * STEP, step=STEP, **query)
    plan = FleetPlan("http://prom.test:9090", fq, transport=fake.transport(), refresh=3600)
    return SpecwatchApp(LaunchPlan([], title="specwatch fleet", fleet=plan), remember_theme=False)


def table_rows(app) -> list[list[str]]:
    return app.screen.query_one("#fleet-table", FleetTable).rows


async def test_rows_sort_filter_group_and_open(tmp_path):
    fake = FakePrometheus(vllm=8, sglang=2)
    app = fleet_app(fake)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(
            pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.refreshes >= 1, "a refresh"
        )
        rows = table_rows(app)
        assert len(rows) == 10
        assert rows[0][1].startswith("gpu-node04") and rows[0][2] == "1.05"  # worst first
        assert "stuck near 1" in rows[0][-2] and "below its group" in rows[0][-2]
        assert any(r[0] == "sglang" and r[2].endswith("~") for r in rows)  # a gauge mean, marked
        text = screen_text(app)
        assert "10 instances" in text and "14:00:00Z" in text
        await pilot.press("s")  # by instance name
        await wait_for(
            pilot,
            lambda: table_rows(app)[0][1].startswith("gpu-node01"),
            "table_rows(app)[0][1].startswith('gpu-node01')",
        )
        await pilot.press("slash")
        await pilot.press(*"re:node0[12]", "enter")
        await wait_for(
            pilot,
            lambda: [r[1][:10] for r in table_rows(app)] == ["gpu-node01", "gpu-node02"],
            "[r[1][:10] for r in table_rows(app)] == ['gpu-node01', 'g...",
        )
        assert "2 of 10 instances" in screen_text(app)
        await pilot.press("slash")
        await pilot.press("ctrl+a", "ctrl+k", *"re:(", "enter")
        await wait_for(pilot, lambda: "bad regular expression" in screen_text(app), "the bad pattern said")
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(table_rows(app)) == 10, "len(table_rows(app)) == 10")
        await pilot.press("b")  # group by the first label seen
        await wait_for(
            pilot, lambda: app.screen.view.group_by is not None, "app.screen.view.group_by is not None"
        )
        await pilot.press("home", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, InstanceScreen), "the instance's pane")
        st = app.screen.states[0]
        await wait_for(pilot, lambda: st.stats.records >= 59, "the instance's history")
        assert st.stats.current.all.accept_len.mean is not None
        shown = {b.binding.action for b in app.screen.active_bindings.values() if b.binding.show}
        assert "back" in shown  # the footer says how to get back to the fleet
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, FleetScreen), "back to the fleet")


async def test_an_error_is_a_status_not_a_crash():
    class Down(FakePrometheus):
        def handler(self, request):
            import httpx

            raise httpx.ConnectError("connection refused")

    app = fleet_app(Down())
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: "error:" in screen_text(app), "the error in the status line")
        assert "cannot connect" in screen_text(app)
