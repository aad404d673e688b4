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
that it was read in time; a picture is taken after ``clear_notifications`` as before.

A pilot's ``pause()`` and ``press()`` end with Textual's ``wait_for_idle``: it sleeps 20 ms at a
time until one such window used less than 1 ms of the process's CPU. With the fast tick (and a
chart drawn in a thread) a 20 ms window is rarely that quiet, so every key press cost ~0.17 s of
waiting. Here the window is ``IDLE_WINDOW`` (the same 5 % of CPU in it counts as idle). No test
depends on how long a pause lasts: each waits for its own condition (``_tui_util.wait_for``,
tests/unit/test_test_rules.py); a shorter window only ends the waiting for nothing sooner."""

from __future__ import annotations

import time

import pytest

FAST_TICK = 0.05
FAST_CHART_INTERVAL = 0.2
TOAST_SECONDS = 600.0
IDLE_WINDOW = 0.005


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


@pytest.fixture(autouse=True)
def _short_idle_window(monkeypatch):
    import textual._wait as textual_wait

    monkeypatch.setattr(textual_wait, "SLEEP_GRANULARITY", IDLE_WINDOW)
    monkeypatch.setattr(textual_wait, "SLEEP_IDLE", IDLE_WINDOW / 20)
