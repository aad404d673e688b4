"""Command line entry point: ``specwatch [COMMAND] ...``.

Each subcommand lives in its own module with ``add_parser(subparsers)`` and ``run(args) -> int``.
Headless commands import only :mod:`tui.core`; the TUI commands import textual lazily.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from tui import __version__

# (command name, module) in the order shown by --help.
COMMANDS = [
    ("summary", "tui.cli.summary"),
    ("stream", "tui.cli.stream"),
]


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise CliError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="specwatch",
        description="Watch speculative-decoding acceptance (accept len / accept rate) in SGLang, "
        "vLLM and llama.cpp logs.",
    )
    parser.add_argument("--version", action="version", version=f"specwatch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, module in COMMANDS:
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:  # a command whose module is not there yet
            if exc.name == module:
                continue
            raise
        mod.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        return int(args.run(args) or 0)
    except CliError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `specwatch ... | head`: stop quietly.
        try:
            sys.stdout = None  # type: ignore[assignment]
        finally:
            return 0
