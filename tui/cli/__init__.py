"""Command line entry point: ``specwatch [COMMAND] ...``.

Each subcommand lives in its own module with ``add_parser(subparsers)`` and ``run(args) -> int``.
Headless commands import only :mod:`tui.core`; the TUI commands import textual lazily.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import signal
import sys
from typing import Any, NoReturn

from tui import __version__
from tui.cli import signals
from tui.cli.signals import STOP_SIGNALS, Stopped  # re-exported: the commands use them
from tui.core.model import stop

# (command name, module) in the order shown by --help.
COMMANDS = [
    ("watch", "tui.cli.tui_commands"),  # registers watch, compare, replay and demo
    ("summary", "tui.cli.summary"),
    ("stream", "tui.cli.stream"),
    ("export", "tui.cli.export"),
    ("fleet", "tui.cli.fleet"),
    ("rules", "tui.cli.rules"),
]
# Commands whose module registers several subcommands.
ALIASES = {"compare": "watch", "replay": "watch", "demo": "watch"}
_KNOWN = frozenset([*(name for name, _ in COMMANDS), *ALIASES])


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


__all__ = ["STOP_SIGNALS", "CliError", "Stopped", "main"]


def _stop_line(command: str | None, signum: int) -> str:
    return f"specwatch{' ' + command if command else ''}: {signals.message(signum)}"


def _stopped(command: str | None, signum: int) -> None:
    signals.wrote_line()
    try:
        print(_stop_line(command, signum), file=sys.stderr, flush=True)
    except (OSError, ValueError):  # no terminal any more (SIGHUP)
        pass


def _no_raw_bytes() -> None:
    """Outside text is escaped before it is written (:mod:`tui.core.model.sanitize`); should any
    byte that is not UTF-8 still reach stdout or stderr, it is written as ``\\udcXX``, never raw
    (Python's default under a C locale is to write it back raw): every output stays valid UTF-8."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "encoding", "").lower().replace("-", "") == "utf8":
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass


def _exit_now_if_unwritable(code: int) -> None:
    """A real process stopped by a signal whose terminal is gone: its buffered output cannot be
    written, and the interpreter's exit would turn the failed flush into status 120 — so the
    status is given here, at once."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            os._exit(code)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands: dict[str, argparse.ArgumentParser] = {}  # the top-level parser's, by name

    def error(self, message: str) -> NoReturn:  # one line, no usage dump
        raise CliError(f"{self.prog}: {message}")

    def value_counts(self) -> dict[str, int]:
        """How many values each option takes (0 for a flag)."""
        return {
            opt: (1 if a.nargs is None else a.nargs if isinstance(a.nargs, int) else 1)
            for a in self._actions
            for opt in a.option_strings
        }


def _module_of(command: str) -> str | None:
    name = ALIASES.get(command, command)
    return next((module for cmd, module in COMMANDS if cmd == name), None)


def build_parser(only: str | None = None) -> _Parser:
    """The parser; with ``only``, just that command's module is imported (a headless command
    then starts without loading the others: pydantic, asyncio, textual...)."""
    from tui.core.formats import families  # the families' data, for the description

    parser = _Parser(
        prog="specwatch",
        description="Watch speculative-decoding acceptance (accept len / accept rate) in "
        f"{families.displays(log_lines=True)} logs.",
    )
    parser.add_argument("--version", action="version", version=f"specwatch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    seen: set[str] = set()
    for _name, module in COMMANDS:
        if module in seen or (only is not None and module != only):
            continue
        seen.add(module)
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:  # a command whose module is not there yet
            if exc.name == module:
                continue
            raise
        mod.add_parser(sub)
    parser.commands = dict(sub.choices)
    return parser


def _route(argv: list[str], known: set[str]) -> list[str]:
    """``specwatch`` alone runs the demo; ``specwatch SOURCE...`` is ``specwatch watch SOURCE...``.
    Options may come before the command word (``specwatch --json summary FILE``,
    ``specwatch --alert drift FILE``): the command is the first word that is no option and no
    option's value; it is moved to the front. A first such word that is no command, no existing
    path, no source text and no name in specwatch.toml is a mistyped command: :class:`CliError`
    at once (not a pane waiting for a file called ``sumary``)."""
    if not argv:
        return ["demo"] if "demo" in known else argv
    at = _command_word(argv, known)
    if at is None:  # options only (--help): the top-level parser reads them
        return argv
    first = argv[at]
    if first in known:
        return [first, *argv[:at], *argv[at + 1 :]]
    if "watch" not in known:
        return argv
    if not _is_source_word(first, _config_option(argv)):
        raise CliError(_unknown_command(first, known))
    return ["watch", *argv]


def _command_word(argv: list[str], known: set[str]) -> int | None:
    """The index of the command word (or watch's first SOURCE) in ``argv``: the first word that is
    neither an option nor an option's value. Which options take a value is read from the parser
    of each command word found in ``argv`` (only those modules are imported), and of watch (an
    option the command lacks but watch has: ``--alert summary FILE`` watches FILE)."""
    if not argv[0].startswith("-") or argv[0] == "-":
        return 0
    candidates = [w for w in dict.fromkeys(argv) if w in known]
    watch = _value_counts("watch") if "watch" in known else {}
    for word in [*candidates, "watch"]:
        if word not in known:
            continue
        at = _first_positional(argv, {**watch, **_value_counts(word)})
        if word == "watch" or (at is not None and argv[at] == word):
            return at
    return _first_positional(argv, {})


def _value_counts(command: str) -> dict[str, int]:
    """How many values each option of ``command`` takes (0 for a flag)."""
    parser = build_parser(only=_module_of(command)).commands.get(command)
    return parser.value_counts() if isinstance(parser, _Parser) else {}


def _first_positional(argv: list[str], counts: dict[str, int]) -> int | None:
    """The index of the first word past options and their values (unknown options are flags; a
    unique prefix of a long option is that option, as argparse reads it)."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return i + 1 if i + 1 < len(argv) else None
        if not arg.startswith("-") or arg == "-":
            return i
        if "=" in arg or (not arg.startswith("--") and len(arg) > 2):
            i += 1  # --opt=value, -xVALUE
            continue
        names = [arg] if arg in counts else [o for o in counts if o.startswith(arg) and arg.startswith("--")]
        i += 1 + (counts[names[0]] if len(names) == 1 else 0)
    return None


# A source text has one of these (a path, a glob, LABEL=, cmd:, host:path, scheme://, ~);
# a bare word is a command, an existing file or a config name. A file that does not exist yet
# is given as ./NAME.
_SOURCE_CHARS = frozenset("/.:=~*?[")


def _is_source_word(word: str, config: str | None) -> bool:
    import os

    if word == "-" or _SOURCE_CHARS.intersection(word) or os.path.lexists(os.path.expanduser(word)):
        return True
    from tui.core.sources.spec import ConfigRef, SourceSpecError

    ref = ConfigRef(config)
    if not ref.might_name(word):
        return False
    try:
        settings = ref.get()
    except SourceSpecError:
        return True  # the command that reads the config says what is wrong with it
    return settings is not None and (word in settings.sources or word in settings.pairs)


def _config_option(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv):
        if arg == "--config" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--config="):
            return arg.split("=", 1)[1]
    return None


def _unknown_command(word: str, known: set[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, sorted(known), n=1, cutoff=0.6)
    if close:
        return f"specwatch: unknown command '{word}' — did you mean '{close[0]}'?"
    return (
        f"specwatch: unknown command '{word}' (no such file, source or name in specwatch.toml; "
        f"commands: {', '.join(sorted(known))}; a file that does not exist yet: ./{word})"
    )


def _parse(parser: _Parser, argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed; a command's options and SOURCEs may be intermixed (``summary A --json B``)."""
    if not argv or argv[0] not in parser.commands:
        return parser.parse_args(argv)
    args = parser.commands[argv[0]].parse_intermixed_args(argv[1:])
    args.command = argv[0]
    return args


def main(argv: list[str] | None = None) -> int:
    """The program (``argv`` None: ``sys.argv``): the stop signals' handlers stay until the
    process has exited. Called with ``argv`` (a test, a script), the handlers from before are
    put back on return."""
    words = sys.argv[1:] if argv is None else argv
    _state.command = words[0] if words and words[0] in _KNOWN else None  # named by a stop line
    try:
        # first: a signal from here on ends with one line and 128 + signal (in a real process,
        # by a deadline whatever happens)
        signals.install(line=(lambda signum: _stop_line(_state.command, signum)) if argv is None else None)
        signals.check()  # a signal noted before main() (tui.__main__ took it)
        if argv is None:
            _no_raw_bytes()
        code = _main(argv)
        signals.check()  # a signal noted while an event loop was being made or closed
        return code
    except Stopped as exc:
        _stopped(_state.command, exc.signum)
        if argv is None:
            _exit_now_if_unwritable(128 + exc.signum)
        return 128 + exc.signum
    finally:
        if argv is None:
            signals.done()
        else:
            signals.uninstall()


class _Main:
    command: str | None = None


_state = _Main()


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # at once, without building every command's parser
        print(f"specwatch {__version__}")
        return 0
    known = set(_KNOWN)
    try:
        argv = _route(argv, known)
        if argv and argv[0] in known:
            _state.command = argv[0]
        wanted = _module_of(argv[0]) if argv and argv[0] in known else None
        parser = build_parser(only=wanted)
        args = _parse(parser, argv)
        _state.command = args.command
        if args.command is None:
            parser.print_help()
            return 0
        signals.check()
        return int(args.run(args) or 0)
    except CliError as exc:
        if signals.received() is not None:  # a source's error caused by the stop (a connection closed)
            raise Stopped(signals.received() or 0) from None
        from tui.core.model.sanitize import visible

        try:
            print(visible(str(exc), keep_newlines=True), file=sys.stderr)  # may quote paths, remote text
        except OSError as err:
            if err.errno == errno.EIO:  # the terminal is gone
                raise Stopped(signal.SIGHUP) from None
            raise
        return 2
    except BrokenPipeError:
        # `specwatch ... | head`: stop quietly.
        sys.stdout = None
        return 0
    except OSError as exc:
        if exc.errno == errno.EIO:  # the terminal is gone (hung up, nohup'd: no SIGHUP): as a SIGHUP
            stop.request(signal.SIGHUP)
            raise Stopped(signals.received() or signal.SIGHUP) from None
        raise
    except KeyboardInterrupt:  # Ctrl-C where specwatch's handler is not installed (main() in a thread)
        raise Stopped(signals.received() or signal.SIGINT) from None
    except BaseException as exc:
        # an event loop's main task cancelled by a stop signal (asyncio is imported only by the
        # commands that run one)
        aio = sys.modules.get("asyncio")
        signum = signals.received()
        if aio is not None and isinstance(exc, aio.CancelledError) and signum is not None:
            raise Stopped(signum) from None
        raise
