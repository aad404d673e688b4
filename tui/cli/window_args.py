"""``--since`` / ``--until`` (and ``--history``) for the commands that read logs whole: summary,
replay, and stream with --no-follow."""

from __future__ import annotations

import argparse
from typing import Any

WHEN = "2026-11-30 14:00, 14:00 (today), or a time ago: --since=-2h or --since 2h"


def add_window_arguments(p: argparse.ArgumentParser, *, history: bool = True) -> None:
    p.add_argument(
        "--since",
        metavar="TIME",
        default=None,
        help=f"only the lines from this log time on ({WHEN}); lines without a "
        "timestamp go with the stamped line before them",
    )
    p.add_argument("--until", metavar="TIME", default=None, help="only the lines before this log time")
    if history:
        p.add_argument(
            "--history",
            action="store_true",
            help="read each file with its rotated copies (NAME.1, NAME.2.gz, NAME-20261130.zst...), "
            "oldest first, as one log",
        )


def window_options(args: argparse.Namespace, command: str) -> dict[str, Any]:
    """``{"window": Window}`` when --since or --until is given, and ``history``; a bad time is
    a :class:`tui.cli.CliError`."""
    from tui.cli import CliError
    from tui.core.sources.window import Window, parse_when

    out: dict[str, Any] = {"history": bool(getattr(args, "history", False))}
    since, until = getattr(args, "since", None), getattr(args, "until", None)
    if since is None and until is None:
        return out
    try:
        window = Window(
            None if since is None else parse_when(since), None if until is None else parse_when(until)
        )
    except ValueError as exc:
        raise CliError(f"specwatch {command}: {exc}") from None
    if window.since is not None and window.until is not None and window.until <= window.since:
        raise CliError(f"specwatch {command}: --until ({until}) is not after --since ({since})")
    out["window"] = window
    return out


def stream_window_options(args: argparse.Namespace, specs: list) -> dict[str, Any]:
    """:func:`window_options` for ``stream``: a window needs ``--no-follow``, and a window or
    ``--history`` local files."""
    from tui.cli import CliError

    options = window_options(args, "stream")
    if options.get("window") and not args.no_follow:
        raise CliError("specwatch stream: --since and --until need --no-follow")
    if options.get("window") or options["history"]:
        for spec in specs:
            if spec.kind not in ("file", "glob"):
                raise CliError(
                    f"specwatch stream: {spec.text}: --since, --until and --history read local files "
                    "(use specwatch summary for other sources)"
                )
    return options
