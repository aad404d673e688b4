"""Command-line options for metrics sources (``metrics+http://HOST:PORT/metrics``, ...), shared by
the commands that open sources."""

from __future__ import annotations

import argparse
from typing import Any

from tui.cli import CliError


def add_metrics_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "metrics sources (metrics+http://HOST:PORT/metrics, metrics+https://..., "
        "metrics+ssh://[USER@]HOST/PORT: a server's Prometheus endpoint)"
    )
    g.add_argument(
        "--scrape-interval",
        type=float,
        default=None,
        metavar="SECONDS",
        help="scrape metrics sources every SECONDS (default 5)",
    )
    g.add_argument(
        "--scrape-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="give up on a scrape after SECONDS (default: the interval, between 1 and 10)",
    )


def metrics_options(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("scrape_interval", "scrape_timeout"):
        v = getattr(args, name, None)
        if v is not None:
            if not v > 0:
                raise CliError(f"--{name.replace('_', '-')} takes a positive number of seconds")
            out[name] = v
    return out
