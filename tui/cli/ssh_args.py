"""Command-line options for SSH sources, shared by stream, summary, watch and compare."""

from __future__ import annotations

import argparse
from typing import Any

from tui.cli import CliError


def add_ssh_arguments(p: argparse.ArgumentParser) -> None:
    """The SSH options shared by the commands that open sources."""
    g = p.add_argument_group("ssh sources (host:/path, user@host:/path, ssh://user@host:port/path)")
    g.add_argument(
        "--accept-new-host-key",
        action="store_true",
        help="trust and record the key of a host not yet in known_hosts (like ssh's "
        "StrictHostKeyChecking=accept-new); a changed key is always refused",
    )
    g.add_argument(
        "--reconnect-max",
        type=float,
        default=None,
        metavar="SECONDS",
        help="longest wait between reconnect attempts (default 10; backoff with jitter)",
    )


def ssh_options(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if getattr(args, "accept_new_host_key", False):
        out["accept_new_host_key"] = True
    if getattr(args, "reconnect_max", None) is not None:
        if args.reconnect_max <= 0:
            raise CliError("--reconnect-max takes a positive number of seconds")
        out["reconnect_max"] = args.reconnect_max
    return out
