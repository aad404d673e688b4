"""The footer is recomposed only when the keys it shows change (tui/widgets/keys_footer.py):
opening an instance's pane from the fleet recomposed Textual's footer five times with the same
twenty keys (a restyle of a hundred widgets before the data showed). The pane's own first lines
are drawn at once, not at the numbers' cadence."""

from __future__ import annotations

from _fleet_util import STEP, FakePrometheus
from _tui_util import _isolated_config, wait_for  # noqa: F401

from tui.app import SpecwatchApp
from tui.core.fleet.fetch import FleetQuery
from tui.panes.fleet import FleetPlan
from tui.panes.launch import LaunchPlan
from tui.screens.fleet import FleetScreen, InstanceScreen
from tui.widgets.keys_footer import KeysFooter


def app_of() -> SpecwatchApp:
    plan = FleetPlan(
        "http://prom.test:9090",
        FleetQuery(window=60 * STEP, step=STEP),
        transport=FakePrometheus(vllm=4, sglang=0).transport(),
        refresh=3600,
    )
    return SpecwatchApp(LaunchPlan([], title="specwatch fleet", fleet=plan), remember_theme=False)


async def test_the_footer_keeps_its_keys_until_they_change():
    app = app_of()
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(
            pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.refreshes >= 1, "rows"
        )
        await pilot.press("home", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, InstanceScreen), "the instance's pane")
        screen = app.screen
        assert isinstance(screen, InstanceScreen)
        # the numbers drawn with the history's records (the first lines drawn at once)
        await wait_for(pilot, lambda: screen.panes and screen.panes[0].drawn_records >= 59, "the numbers")
        footer = screen.query_one(KeysFooter)
        await wait_for(pilot, lambda: len(footer.query("FooterKey")) > 10, "the footer's keys")
        before = list(footer.query("FooterKey"))
        await footer.recompose()  # the same keys: nothing mounted again
        assert list(footer.query("FooterKey")) == before
        assert all(a is b for a, b in zip(footer.query("FooterKey"), before))
        await pilot.resize_terminal(70, 30)  # fewer keys fit: the footer is made again
        await wait_for(
            pilot,
            lambda: 0 < len(footer.query("FooterKey")) < len(before),
            "fewer keys in a narrower footer",
        )
        assert not any(k in before for k in footer.query("FooterKey"))


async def test_a_grouping_column_is_made_for_every_row_and_the_order_follows():
    """A key only reorders the cells made at the last answer; a new column (``b``, a label)
    makes its own cells, which are each row's label value."""
    from tui.widgets.fleet_table import FleetTable

    app = app_of()
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(
            pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.refreshes >= 1, "rows"
        )
        screen = app.screen
        assert isinstance(screen, FleetScreen)
        table = screen.query_one(FleetTable)
        seen: list[str] = []
        for _ in range(3):  # the labels in turn
            await pilot.press("b")
            await wait_for(
                pilot,
                lambda: screen.view.group_by not in (None, *seen) and screen.view.group_by in table.columns,
                "a grouping column",
            )
            label = screen.view.group_by
            assert label is not None
            seen.append(label)
            at = table.columns.index(label)
            rows = screen.view.rows()
            assert [r[at] for r in table.rows] == [i.labels.get(label, "") for i in rows]
