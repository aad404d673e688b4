"""The stop-signal machinery in one process (tui/cli/signals.py, tui/core/model/stop.py): an event
loop takes the signals and cancels its main task, hands them back to specwatch's handler (never
to the default action) when it closes; outside a loop a signal is only noted, and raised inside
an interruptible wait."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from tui.cli import signals
from tui.core.model import stop


@pytest.fixture
def installed():
    """specwatch's handlers; yields the stop signals that were ignored before (a background job's
    SIGINT, nohup's SIGHUP: they stay ignored, by design)."""
    ignored = {sig for sig in signals.STOP_SIGNALS if signal.getsignal(sig) is signal.SIG_IGN}
    signals.install()
    yield ignored
    signals.uninstall()


def test_a_loop_cancels_its_main_task_and_gives_the_signals_back(installed):
    ours = signal.getsignal(signal.SIGTERM)
    assert callable(ours) and ours is not signal.default_int_handler

    async def forever() -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.Event().wait()

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(forever())
    assert signals.received() == signal.SIGTERM
    for sig in signals.STOP_SIGNALS:  # the loop closed: specwatch's handler again, not SIG_DFL
        assert signal.getsignal(sig) is (signal.SIG_IGN if sig in installed else ours), sig


def test_only_the_first_signal_acts_and_outside_a_loop_it_is_only_noted(installed):
    os.kill(os.getpid(), signal.SIGHUP)  # plain code: noted, not raised here
    os.kill(os.getpid(), signal.SIGINT)
    assert signals.received() == signal.SIGHUP
    with pytest.raises(stop.Stopped) as err:
        signals.check()
    assert err.value.signum == signal.SIGHUP and err.value.code == 129


def test_an_interruptible_wait_is_left_at_once(installed):
    r, w = os.pipe()
    try:
        with pytest.raises(stop.Stopped) as err, stop.interruptible():
            signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGTERM))
            signal.setitimer(signal.ITIMER_REAL, 0.05)  # a TERM while the read below blocks
            os.read(r, 1)  # blocks until the signal
        assert err.value.signum == signal.SIGTERM
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        os.close(r)
        os.close(w)


def test_nothing_is_left_noted_after_uninstall():
    signals.install()
    os.kill(os.getpid(), signal.SIGTERM)
    assert signals.received() == signal.SIGTERM
    signals.uninstall()
    assert signals.received() is None
    with stop.interruptible():  # a later whole-file read in this process is not stopped
        pass


def test_a_signal_noted_before_the_loop_stops_it_at_once(installed):
    os.kill(os.getpid(), signal.SIGTERM)
    ran: list[str] = []

    async def work() -> None:
        ran.append("started")
        await asyncio.Event().wait()

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(work())
    assert signals.received() == signal.SIGTERM
