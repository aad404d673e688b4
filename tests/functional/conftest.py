"""The app's clock in the functional tests: its cadence five times faster.

The screen ticks every ``TICK`` seconds (0.25 s: headers at 4 Hz, numbers and charts every 4th
tick) and a chart takes new data at most every ``MIN_INTERVAL`` (1 s). A test that waits for the
picture to settle (``_tui_util.finished``) waits for those ticks: a second or two of nothing per
test, minutes over the folder. Here the tick is 0.05 s and the chart's interval 0.2 s: the same
renders in the same order, sooner. What is drawn does not depend on the cadence (the snapshots are
the same); the tests of the cadence itself count ticks, whatever their length
(test_app_layout.py's bounded renders, test_chart_throttle.py)."""

from __future__ import annotations

import pytest

FAST_TICK = 0.05
FAST_CHART_INTERVAL = 0.2


@pytest.fixture(autouse=True)
def _fast_cadence(monkeypatch):
    from tui.screens import ticking
    from tui.widgets import history_chart

    monkeypatch.setattr(ticking, "TICK", FAST_TICK)
    monkeypatch.setattr(history_chart, "MIN_INTERVAL", FAST_CHART_INTERVAL)
