"""The options every command that follows live sources shares (watch, compare, stream, export):
where to start, following, the config file, idle and polling, SSH and metrics settings."""

from __future__ import annotations

import argparse
from typing import Any

from tui.cli.alert_args import add_alert_arguments, alert_setup
from tui.cli.config_arg import config_ref
from tui.cli.metrics_args import add_metrics_arguments, metrics_options
from tui.cli.ssh_args import add_ssh_arguments, ssh_options


def add_live_arguments(
    p: argparse.ArgumentParser,
    *,
    no_follow: bool = True,
    idle_help: str = "say a source is idle after this long without a line (default 30; 0: never)",
) -> None:
    p.add_argument(
        "--from",
        dest="start",
        default="start",
        metavar="start|end|-N",
        help="where to start in files: the start (default), the end, or the last N lines",
    )
    if no_follow:
        p.add_argument("--no-follow", action="store_true", help="read files to their end and stop following")
    p.add_argument("--config", metavar="FILE", help="specwatch.toml to use (default: the XDG config dir)")
    p.add_argument("--idle", type=float, default=30.0, metavar="SECONDS", help=idle_help)
    p.add_argument(
        "--poll",
        type=float,
        default=None,
        metavar="SECONDS",
        help="look at files every SECONDS instead of relying on inotify (network file systems)",
    )
    add_ssh_arguments(p)
    add_metrics_arguments(p)
    add_alert_arguments(p)


def live_setup(args: argparse.Namespace, command: str) -> tuple[Any, list, dict[str, Any]]:
    """(start position, source specs, source options) from the parsed arguments; a user error
    is a :class:`tui.cli.CliError` naming ``specwatch COMMAND``. The alert rules (``--alert`` and
    specwatch.toml) are read here too, into ``args.alerting`` (a
    :class:`tui.cli.alert_args.Alerting`, or None when there are no rules)."""
    from tui.cli import CliError
    from tui.core.sources.lines import parse_start
    from tui.core.sources.spec import SourceSpecError, expand_source_args

    try:
        start = parse_start(args.start)
    except ValueError as exc:
        raise CliError(f"specwatch {command}: {exc}") from None
    if args.idle < 0 or (args.poll is not None and args.poll <= 0):
        raise CliError(f"specwatch {command}: --idle and --poll take a positive number of seconds")
    try:
        config = config_ref(args)
        specs = expand_source_args(args.sources, config)
    except SourceSpecError as exc:
        raise CliError(f"specwatch {command}: {exc}") from None
    args.alerting = alert_setup(args, specs, command, config)
    options: dict[str, Any] = {"idle_after": args.idle or None}
    if args.poll is not None:
        options.update(use_inotify=False, poll_interval=args.poll)
    options.update(ssh_options(args))
    options.update(metrics_options(args))
    return start, specs, options
