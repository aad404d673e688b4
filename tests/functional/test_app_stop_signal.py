"""A stop signal while the app starts (tui.cli.signals calls ``SpecwatchApp.stop_signal`` in the
event loop): the app ends with 128 + signal once its watch screen is mounted, with no exception
from handlers that run while it exits (an exit while the screen mounted used to leave on_mount
without its widgets: NoMatches; the status handler without panes: IndexError)."""

from __future__ import annotations

import signal

import pytest
from _tui_util import _isolated_config, replay_app, wait_for  # noqa: F401

from tui.app import SpecwatchApp


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
async def test_a_stop_signal_as_the_watch_screen_is_pushed(monkeypatch, sig):
    push = SpecwatchApp.push_screen

    def signalled_push(self, screen, *args, **kwargs):
        self.stop_signal(sig)  # arrives as the app pushes (and mounts) its screen
        return push(self, screen, *args, **kwargs)

    monkeypatch.setattr(SpecwatchApp, "push_screen", signalled_push)
    app = replay_app("ab_a.log", speed=None)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.return_value is not None, "the app to exit")
    assert app.return_value == 128 + sig and app.stopped_by == sig


async def test_a_stop_signal_before_the_app_runs():
    app = replay_app("ab_a.log", speed=None)
    app.stop_signal(signal.SIGTERM)  # noted before the loop ran the app
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.return_value is not None, "the app to exit")
    assert app.return_value == 143 and app.stopped_by == signal.SIGTERM
