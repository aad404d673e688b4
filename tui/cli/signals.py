"""Stop signals, the same way in every command and every phase.

SIGINT (Ctrl-C), SIGTERM and SIGHUP end a command with one line on stderr and exit status
128 + signal (130, 143, 129): :func:`tui.cli.main` installs :func:`install` first thing and
reports the signal at its end. A signal handler never raises into code that does not expect it
(argparse, an import, asyncio or asyncssh half way through their work: an exception raised
inside asyncssh's data handling used to end ``summary host:path`` with a TypeError). Where the
main thread is when the signal arrives decides how it stops:

* **an event loop** (``stream``, ``export``, the app, ``summary`` over SSH or of /metrics): every
  loop made while the handlers are installed is a ``StopLoop`` (an event loop policy), which
  takes the signals through asyncio's own signal handling (``loop.add_signal_handler``) and runs
  the command's stop action in the loop: the main task is cancelled (its ``finally`` blocks
  close sources and connections), or the app asked to exit (:func:`on_stop`), which restores the
  terminal.
* **plain Python** (start-up: imports and argument parsing; a local ``summary``): the signal is
  noted (:mod:`tui.core.model.stop`) and the command stops at the next check — after the
  arguments are read, between two chunks of a file — or at once inside an interruptible wait of
  its own (stdin, a command's output, a scanning thread's result), where the handler raises.
* **between the two** (an event loop being made or closed): noted; a loop about to run stops at
  once, and ``main()`` checks once more before it returns.

Only the first signal acts; later ones, while the command is already stopping, are noted and
ignored (a second Ctrl-C never interrupts the clean-up of the first). Whatever the main thread
does meanwhile, the process is gone by a deadline (:mod:`tui.cli.exit_deadline`: 1.5 s after a
SIGHUP or a lost terminal, 8 s after SIGINT or SIGTERM), even where the clean stop hangs (the
app's terminal gone under Textual's driver). Before specwatch's first
line runs (the interpreter starting), the signal's default action applies: the process is
killed by it (a shell reports 128 + signal too) and nothing can be printed.
"""

from __future__ import annotations

import importlib.machinery
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tui.cli.exit_deadline import Watchdog
from tui.core.model import stop
from tui.core.model.stop import Stopped

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "STOP_SIGNALS",
    "Stopped",
    "check",
    "done",
    "hang_up",
    "install",
    "message",
    "on_stop",
    "received",
    "uninstall",
    "watch_terminal",
    "wrote_line",
]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

# Modules whose code must never see an exception raised by a signal handler: their state (a
# loop's callbacks, a protocol's buffers, a coroutine about to be run) would be left half done.
_ASYNC_MODULES = ("asyncio", "textual", "asyncssh", "prometheus_client", "_asyncio")


class _State:
    def __init__(self) -> None:
        self.installed = False
        self.done = False  # main() has returned: a late signal is noted, the exit goes on
        self.action: Callable[[int], None] | None = None  # the command's stop action in a loop
        self.replaced: dict[int, Any] = {}
        self.policy: asyncio.AbstractEventLoopPolicy | None = None  # the one before ours
        self.finder: _WhenAsyncio | None = None
        self.watchdog: Watchdog | None = None  # the deadline (a real process only: main() with sys.argv)
        self.loop: Any = None  # the StopLoop running in the main thread


_state = _State()


def received() -> int | None:
    """The first stop signal received since :func:`install`, or None."""
    return stop.requested()


def message(signum: int) -> str:
    return "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"


def check() -> None:
    """Raises :class:`Stopped` when a stop signal has arrived (one only noted, in a phase where
    nothing could be raised)."""
    stop.check()


def _in_async_code(frame: Any) -> bool:
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name.split(".", 1)[0] in _ASYNC_MODULES:
            return True
        frame = frame.f_back
    return False


def _handler(signum: int, frame: Any) -> None:
    """The Python-level handler outside event loops (a loop's own handling replaces it while
    it runs): notes the signal; raises only in an interruptible wait
    (:func:`tui.core.model.stop.interruptible`), never into asyncio's code."""
    if _state.done:
        return  # main() has returned: the exit goes on
    if _state.watchdog is not None:
        _state.watchdog.arm(signum)
    if stop.request(signum) and stop.in_wait() and not _in_async_code(frame):
        raise Stopped(signum)


def _in_loop(signum: int, frame: Any) -> None:
    """The Python-level handler while an event loop takes the signals (in place of asyncio's
    no-op: the loop gets the signal through its wake-up descriptor as before): starts the
    deadline, which must run even when the loop never gets to the signal (a callback stuck)."""
    if _state.watchdog is not None:
        _state.watchdog.arm(signum)


def hang_up() -> None:
    """The terminal is gone (called by the watchdog's thread): a SIGHUP, asked for in the event
    loop if one runs (a signal noted otherwise: the next check stops the command)."""
    if not stop.request(signal.SIGHUP):
        return
    loop = _state.loop
    if loop is not None:
        try:
            loop.call_soon_threadsafe(loop.act, signal.SIGHUP)
        except RuntimeError:  # closed meanwhile
            pass


def watch_terminal() -> None:
    """The app's terminal is watched from now on: a hang-up on it (EOF, EIO) is a SIGHUP."""
    if _state.watchdog is not None:
        _state.watchdog.watch_terminal()


def wrote_line() -> None:
    """``main()`` has written the stop line (the deadline then writes none)."""
    if _state.watchdog is not None:
        _state.watchdog.line_written = True


def on_stop(action: Callable[[int], None] | None) -> None:
    """What a stop signal does while an event loop runs (called in the loop with the signal);
    None: cancel the loop's main task. The app sets its exit here."""
    _state.action = action


def _loop_policy() -> asyncio.AbstractEventLoopPolicy:
    """A policy making :class:`StopLoop` event loops (asyncio imported only when something
    else imports it: a local ``summary`` never does)."""
    import asyncio

    class StopLoop(asyncio.SelectorEventLoop):
        """An event loop that takes the stop signals while it lives (asyncio's signal handling: a
        wake-up through the loop's self-pipe, the action run as a callback) and hands them back to
        :func:`_handler` when it closes, never to the default action in between."""

        def __init__(self) -> None:
            super().__init__()
            self._main: asyncio.Task | None = None
            self._ours: list[int] = []
            if threading.current_thread() is not threading.main_thread():
                return
            for sig in STOP_SIGNALS:
                if signal.getsignal(sig) is _handler:
                    self.add_signal_handler(sig, self._signalled, sig)
                    signal.signal(sig, _in_loop)
                    self._ours.append(sig)
            if self._ours:
                _state.loop = self

        def create_task(self, coro: Any, **kwargs: Any) -> asyncio.Task:
            task = super().create_task(coro, **kwargs)
            if self._main is None:  # asyncio.run's (and App.run's) first task is the main one
                self._main = task
                noted = stop.requested()
                if noted is not None and self._ours:  # noted while the loop was being made
                    self.call_soon(self.act, noted)
            return task

        def _signalled(self, sig: int) -> None:
            if stop.request(sig):  # the first one acts; later ones leave the clean-up alone
                self.act(sig)

        def act(self, sig: int) -> None:
            if _state.action is not None:
                _state.action(sig)
            elif self._main is not None:
                self._main.cancel()

        def close(self) -> None:
            if _state.loop is self:
                _state.loop = None
            super().close()

        def remove_signal_handler(self, sig: int) -> bool:
            if sig not in self._ours:
                return super().remove_signal_handler(sig)
            self._ours.remove(sig)
            handlers: dict = self._signal_handlers  # type: ignore[attr-defined]
            if handlers.pop(sig, None) is None:
                return False
            signal.signal(sig, _handler)  # straight from asyncio's handler to ours (asyncio's own would
            if not handlers:  # put the default action back: killed, no line)
                try:
                    signal.set_wakeup_fd(-1)
                except (ValueError, OSError):
                    pass
            return True

    class _Policy(asyncio.DefaultEventLoopPolicy):
        def new_event_loop(self) -> asyncio.AbstractEventLoop:
            return StopLoop()

    return _Policy()


class _WhenAsyncio:
    """Sets the event loop policy the moment asyncio has been imported (by anyone): a meta path
    finder (importlib.abc.MetaPathFinder's one method; importing that module costs a millisecond)."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name != "asyncio":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            _set_policy(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _set_policy(asyncio_module: Any) -> None:
    if _state.installed and _state.policy is None:
        _state.policy = asyncio_module.get_event_loop_policy()
        asyncio_module.set_event_loop_policy(_loop_policy())


def install(line: Callable[[int], str] | None = None) -> None:
    """The stop signals go to specwatch from now on (those ignored, as SIGHUP under nohup or
    SIGINT in a background job, stay ignored); every new event loop takes them while it runs.
    Only in the main thread (``main()`` called from a test's thread leaves them alone). With
    ``line`` (the stop line of a signal; a real process), the deadline's watchdog starts too."""
    if _state.installed or threading.current_thread() is not threading.main_thread():
        return
    if sys.platform == "win32":  # pragma: no cover - no SIGHUP, no add_signal_handler
        return
    stop.reset()
    _state.action = None
    _state.done = False
    early: int | None = None  # noted by the handler of specwatch's first instruction (tui.EarlySignal)
    for sig in STOP_SIGNALS:
        current = signal.getsignal(sig)
        if current is signal.SIG_IGN:
            continue
        _state.replaced[sig] = signal.signal(sig, _handler)
        noted = getattr(current, "noted", None)
        if early is None and isinstance(noted, int):
            early = noted
    _state.installed = True
    _state.policy = None
    if line is not None:
        _state.watchdog = Watchdog(line, hang_up)
        _state.watchdog.start()
    if early is not None:  # before main(): stopped at main()'s first check
        stop.request(early)
        if _state.watchdog is not None:
            _state.watchdog.arm(early)
    if "asyncio" in sys.modules:
        _set_policy(sys.modules["asyncio"])
    else:
        _state.finder = _WhenAsyncio()
        sys.meta_path.insert(0, _state.finder)


def done() -> None:
    """``main()`` has returned its exit status, the process is exiting (threads joined, the
    interpreter finalised): a signal now changes nothing (no line, no traceback). Ignored, not
    just caught: the interpreter's finalisation puts the default action back for signals with a
    Python handler, and a signal then would kill the process without a word."""
    _state.done = True
    if _state.installed:
        for sig in _state.replaced:
            signal.signal(sig, signal.SIG_IGN)


def uninstall() -> None:
    """The handlers and event loop policy from before :func:`install` (``main()`` called in a
    test's process)."""
    if not _state.installed:
        return
    for sig, old in _state.replaced.items():
        signal.signal(sig, old)
    _state.replaced.clear()
    if _state.watchdog is not None:
        _state.watchdog.stop()
        _state.watchdog = None
    if _state.finder in sys.meta_path:
        sys.meta_path.remove(_state.finder)
    if _state.policy is not None:
        sys.modules["asyncio"].set_event_loop_policy(_state.policy)
    _state.installed = False
    _state.action = None
    stop.reset()  # a signal noted for that main() call stops nothing after it
