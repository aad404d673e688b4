"""The app's clocks in the functional tests: its cadence five times faster, and toasts that stay.

The screen ticks every ``TICK`` seconds (0.25 s: headers at 4 Hz, numbers and charts every 4th
tick) and a chart takes new data at most every ``MIN_INTERVAL`` (1 s). A test that waits for the
picture to settle (``_tui_util.finished``) waits for those ticks: a second or two of nothing per
test, minutes over the folder. Here the tick is 0.05 s and the chart's interval 0.2 s: the same
renders in the same order, sooner. What is drawn does not depend on the cadence (the snapshots are
the same); the tests of the cadence itself count ticks, whatever their length
(test_app_layout.py's bounded renders, test_chart_throttle.py).

A toast expires after its few seconds of wall-clock time: on a busy machine the app can be that
long between raising one and the test's next look (four tests failed so beside two busy
processes). Here a notification lasts ``TOAST_SECONDS``: the tests check what the app said, not
that it was read in time; a picture is taken after ``clear_notifications`` as before."""

from __future__ import annotations

import time

import pytest

FAST_TICK = 0.05
FAST_CHART_INTERVAL = 0.2
TOAST_SECONDS = 600.0


@pytest.fixture(autouse=True)
def _fast_cadence(monkeypatch):
    from tui.screens import ticking
    from tui.widgets import history_chart

    monkeypatch.setattr(ticking, "TICK", FAST_TICK)
    monkeypatch.setattr(history_chart, "MIN_INTERVAL", FAST_CHART_INTERVAL)


@pytest.fixture(autouse=True)
def _toasts_stay(monkeypatch):
    from textual.notifications import Notification

    monkeypatch.setattr(
        Notification, "time_left", property(lambda n: n.raised_at + TOAST_SECONDS - time.time())
    )
