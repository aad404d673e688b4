"""specwatch: watch speculative-decoding acceptance in inference-server logs.

Run as a program (``python -m tui``, the ``specwatch`` command: :func:`tui.__main__.run`), the
stop signals (SIGINT, SIGTERM, SIGHUP) are taken at its first instruction — here, before any
other import: a handler that only notes the first one (:class:`EarlySignal`, set on the builtin
``_signal`` module: importing ``signal`` would load ``enum`` first). ``main()`` then puts its own
handlers in place (:mod:`tui.cli.signals`), takes over a signal noted meanwhile and stops with
one line and 128 + signal (130 for Ctrl-C), never a ``KeyboardInterrupt`` traceback from an
import. Signals ignored when specwatch starts (SIGHUP under nohup, SIGINT in a background job)
stay ignored. Imported as a library, nothing is changed. Before this (the interpreter starting,
its ``site`` hooks), Python's own defaults apply.
"""

import sys as _sys

__version__ = "0.1.0"

_signal = __import__("_signal")  # the builtin module, nothing else loaded


class EarlySignal:
    """The handler from the first instruction to ``main()``'s own: notes the first stop signal
    (``noted``; :func:`tui.cli.signals.install` reads it) and does nothing else."""

    def __init__(self) -> None:
        self.noted: int | None = None

    def __call__(self, signum: int, frame: object) -> None:
        if self.noted is None:
            self.noted = signum


def take_signals() -> None:
    """The stop signals noted by an :class:`EarlySignal` (once: a second call keeps the first)."""
    handler = EarlySignal()
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(_signal, name, None)  # no SIGHUP on Windows
        if sig is None:
            continue
        current = _signal.getsignal(sig)
        if current is not _signal.SIG_IGN and not isinstance(current, EarlySignal):
            _signal.signal(sig, handler)


def _run_as_program() -> bool:
    """``python [OPTIONS] -m tui ...``: this package is being imported to be run."""
    argv = list(getattr(_sys, "orig_argv", ()))
    i = 1
    while i < len(argv):
        word = argv[i]
        if word == "-m":
            return argv[i + 1 : i + 2] == ["tui"]
        if word.startswith("-m"):
            return word == "-mtui"
        if not word.startswith("-") or word == "-c":
            return False
        i += 2 if word in ("-X", "-W") else 1  # the options with a value of their own
    return False


if _run_as_program():
    take_signals()
