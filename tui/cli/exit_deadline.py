"""The last resort: a process told to stop is gone by a deadline, whatever its threads are doing.

The clean stop (:mod:`tui.cli.signals`) runs in the main thread: the event loop's stop action,
then the command's ``finally`` blocks, then the interpreter's exit. Each of those can hang where
no signal can reach it — the app's terminal gone (Textual's driver then blocks its main thread in
``close`` -> ``_writer_thread.stop`` -> ``queue.put``, against a writer thread that died of EIO or
a queue lock held by a signal handler running on top of it), a library's thread that never
returns, a non-daemon thread joined at exit. So one small thread, the watchdog, started first
thing by ``main()`` in a real process:

* is told of every stop signal by the signal handlers (one byte written to its pipe: no lock is
  taken, so a handler run on top of any code can do it) and from then on counts down:
  :data:`HANGUP_SECONDS` for SIGHUP and a lost terminal, :data:`STOP_SECONDS` for SIGINT and
  SIGTERM (the app may take up to its start-up grace to stop cleanly);
* watches the terminal of the app (:func:`watch_terminal`): a hang-up or an error on it (the
  window closed, an SSH connection dropped, ``tmux kill-server``: POLLHUP on the tty, which is
  what a read would see as EOF or EIO) is a SIGHUP, even where SIGHUP itself is ignored (nohup):
  the stop is asked for in the event loop (:func:`tui.cli.signals.hang_up`) and the count-down
  starts;
* at the deadline, leaves the terminal as it was found when it is still there (the saved
  terminal modes, out of the alternate screen, mouse reporting off), writes the stop line if
  nobody has, and ends the process with ``os._exit(128 + signal)``: no thread, lock or
  finaliser can keep it alive.

Nothing here runs unless a stop is asked for: the watchdog sleeps in ``poll``.
"""

from __future__ import annotations

import math
import os
import select
import signal
import threading
import time
from collections.abc import Callable

__all__ = ["HANGUP_SECONDS", "STOP_SECONDS", "Watchdog"]

HANGUP_SECONDS = 1.5
"""A lost terminal (SIGHUP, EOF or EIO on it): the process is gone within 2 s of it."""

STOP_SECONDS = 8.0
"""SIGINT or SIGTERM: the clean stop's time (the app's start-up grace is 5 s), then the end."""

# Bytes on the watchdog's pipe besides a signal number.
_QUIT = 0
_RESYNC = 255

# What leaves the app's screen on the terminal: the main screen back, the cursor shown, mouse
# reporting, focus events, bracketed paste and the Kitty keyboard protocol off (what Textual's
# driver writes when it stops cleanly).
_LEAVE = b"\x1b[<u\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1015l\x1b[?1004l\x1b[?2004l\x1b[?1049l\x1b[?25h"
_HUP = select.POLLHUP | select.POLLERR


def _seconds(signum: int) -> float:
    return HANGUP_SECONDS if signum == signal.SIGHUP else STOP_SECONDS


class Watchdog(threading.Thread):
    """The deadline thread (one per process; see the module's docstring)."""

    def __init__(self, line: Callable[[int], str], hang_up: Callable[[], None]) -> None:
        super().__init__(name="specwatch-deadline", daemon=True)
        self._line = line  # the stop line for a signal (the command's name in it)
        self._hang_up = hang_up  # the terminal is gone: ask for the stop (called in this thread)
        self._r, self._w = os.pipe()
        os.set_blocking(self._w, False)
        self._ttys: list[int] = []
        self._modes: tuple[int, list] | None = None  # the terminal's modes when the app started
        self.line_written = False  # the stop line is out (main() wrote it): not written twice

    # -- from any thread, or a signal handler ------------------------------------------------
    def _send(self, byte: int) -> None:
        try:
            os.write(self._w, bytes((byte,)))
        except OSError:  # the pipe full (a burst of signals: the first is in it) or closed
            pass

    def arm(self, signum: int) -> None:
        """A stop signal arrived: the count-down starts (a SIGHUP's shortens one under way)."""
        self._send(signum)

    def watch_terminal(self) -> None:
        """From now on, a hang-up of any of stdin, stdout, stderr that is a terminal is a SIGHUP."""
        self._ttys = [fd for fd in (0, 1, 2) if _isatty(fd)]
        if self._ttys:
            try:
                import termios

                self._modes = (self._ttys[0], termios.tcgetattr(self._ttys[0]))
            except (ImportError, OSError, ValueError):
                self._modes = None
        self._send(_RESYNC)

    def stop(self) -> None:
        """No deadline any more (``main()`` called in a test's process has returned)."""
        self._send(_QUIT)
        self.join(timeout=5)
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass

    # -- the thread ----------------------------------------------------------------------------
    def run(self) -> None:
        poller = select.poll()
        poller.register(self._r, select.POLLIN)
        watched: set[int] = set()
        lost = False
        signum = 0
        deadline = math.inf
        while True:
            wait = None if deadline == math.inf else max(0.0, deadline - time.monotonic()) * 1000
            events = poller.poll(wait)
            now = time.monotonic()
            for fd, mask in events:
                if fd == self._r:
                    for byte in os.read(self._r, 64):
                        if byte == _QUIT:
                            return
                        if byte == _RESYNC:
                            for tty in set(self._ttys) - watched:
                                poller.register(tty, 0)  # no data asked for: only a hang-up or an error
                                watched.add(tty)
                            continue
                        signum = signum or byte
                        deadline = min(deadline, now + _seconds(byte))
                elif mask & (_HUP | select.POLLNVAL):
                    poller.unregister(fd)
                    watched.discard(fd)
                    if mask & select.POLLNVAL:  # closed by its owner: not a hang-up
                        continue
                    lost = True
                    signum = signum or signal.SIGHUP
                    deadline = min(deadline, now + HANGUP_SECONDS)
                    self._hang_up()
            if time.monotonic() >= deadline:
                self._last_resort(signum, lost)

    def _last_resort(self, signum: int, lost: bool) -> None:
        if not lost and self._modes is not None:
            fd, modes = self._modes
            try:
                os.set_blocking(fd, False)  # a terminal that does not take the bytes cannot hold us
                os.write(fd, _LEAVE)
                import termios

                termios.tcsetattr(fd, termios.TCSANOW, modes)
            except (ImportError, OSError, ValueError):
                pass
        if not self.line_written:
            try:
                os.set_blocking(2, False)
                os.write(2, (self._line(signum) + "\n").encode("utf-8", "backslashreplace"))
            except OSError:
                pass
        os._exit(128 + signum)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False
