"""A stop asked for by a signal (SIGINT, SIGTERM, SIGHUP), as the command's code sees it.

The signal handler (:mod:`tui.cli.signals`) only notes the signal here (:func:`request`); code
that runs long without an event loop looks at it between two pieces of work (:func:`check`,
which raises :class:`Stopped`) — a whole file's summary checks between two chunks. An exception
raised by a signal handler at a random bytecode can leave a library half way (argparse's state, an
import's module lock, asyncssh's buffers), so the handler raises only inside an
:func:`interruptible` section: a blocking wait of our own (a read of stdin or a command's
output, a scanning thread's result) that may last forever and is safe to leave by an exception.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Stopped(SystemExit):
    """A stop signal arrived: unwinds like Ctrl-C does (worker pools, sources and connections are
    closed on the way out); the command ends with one line and exit status 128 + signal. A
    SystemExit, so that ``except Exception`` blocks on the way let it pass."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum


class _State:
    signum: int | None = None  # the first stop signal
    waiting = 0  # inside interruptible() sections


_state = _State()


def request(signum: int) -> bool:
    """Notes a stop signal: whether it is the first (only the first counts)."""
    if _state.signum is not None:
        return False
    _state.signum = signum
    return True


def in_wait() -> bool:
    """Whether the main thread is in an :func:`interruptible` wait (a signal handler may raise
    :class:`Stopped` there)."""
    return _state.waiting > 0


def requested() -> int | None:
    """The stop signal noted, or None."""
    return _state.signum


def check() -> None:
    """Raises :class:`Stopped` when a stop signal has been noted."""
    if _state.signum is not None:
        raise Stopped(_state.signum)


def reset() -> None:
    _state.signum = None
    _state.waiting = 0


def _in_event_loop() -> bool:
    aio = sys.modules.get("asyncio")
    if aio is None:
        return False
    try:
        aio.get_running_loop()
    except RuntimeError:
        return False
    return True


@contextmanager
def interruptible() -> Iterator[None]:
    """A blocking wait that a stop signal may interrupt by raising :class:`Stopped` in it (keep
    the section to the wait itself: a call into C that blocks, and nothing that keeps state).
    Signals are handled in the main thread only, and by the event loop while one runs: in another
    thread or in a loop (the app's readers) this does nothing."""
    if threading.current_thread() is not threading.main_thread() or _in_event_loop():
        yield
        return
    check()
    _state.waiting += 1
    try:
        yield
    finally:
        _state.waiting -= 1
