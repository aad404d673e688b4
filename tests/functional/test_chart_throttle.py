"""The history chart takes new data at most once a second; data set sooner waits for a timer.
A timer that fires late (a busy event loop) must not put older data back over data taken
directly in the meantime: a grid pane kept an old chart for good (its pane's key said it was
up to date)."""

from __future__ import annotations

import types

from _tui_util import wait_for
from textual.app import App, ComposeResult

from tui.widgets import history_chart as hc
from tui.widgets.history_chart import ChartData, ChartSeries, HistoryChart


def data(n: int) -> ChartData:
    return ChartData([ChartSeries("a", [float(i) for i in range(n)], [2.0] * n)], [], [], (1.0, 3.0))


class One(App):
    def compose(self) -> ComposeResult:
        yield HistoryChart()


async def test_a_late_timer_does_not_bring_back_older_data(monkeypatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(hc, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    monkeypatch.setattr(hc, "MIN_INTERVAL", 1.0)  # the app's own interval (tests/functional/conftest.py)
    app = One()
    async with app.run_test(size=(60, 20)) as pilot:
        chart = app.query_one(HistoryChart)
        monkeypatch.setattr(chart, "set_timer", lambda *a, **k: None)  # the timer: fired by hand below
        chart.set_data(data(10))  # taken at once
        assert len(chart.data.series[0].xs) == 10
        clock[0] += 0.2
        chart.set_data(data(20))  # too soon: waits for the timer
        assert len(chart.data.series[0].xs) == 10
        clock[0] += 2.0  # the timer is late; meanwhile newer data comes and is taken at once
        chart.set_data(data(30))
        assert len(chart.data.series[0].xs) == 30
        chart._take_pending()  # the late timer fires
        assert len(chart.data.series[0].xs) == 30
        await pilot.pause()
        await wait_for(pilot, lambda: chart.settled, "chart.settled")
