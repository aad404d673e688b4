"""``specwatch fleet [URL]``: every server's acceptance from a Prometheus that scrapes them (vLLM,
SGLang, TensorRT-LLM, llama.cpp, and ``specwatch export`` for log-only servers), one row per
serving instance, with groups and a canary verdict between two label selectors.

The URL, credentials (bearer token, basic auth, CA file), selector, grouping labels and window
can come from ``[fleet]`` in specwatch.toml; credentials only from there (never the command line).
``--json`` for scripts; ``--exit-on VERDICT`` (with ``--compare``) exits 3 when the canary
verdict is VERDICT: a deploy gate.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from tui.cli import CliError, signals
from tui.core.model.sanitize import visible

HELP = "every server's acceptance from Prometheus: one row per instance, groups, canary verdicts"
EXIT_ON = 3
VERDICTS = ("lower", "higher", "no_difference", "insufficient")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("fleet", help=HELP, description=HELP + ".")
    p.add_argument(
        "url", nargs="?", metavar="URL", help="the Prometheus URL (default: url in [fleet] of specwatch.toml)"
    )
    p.add_argument(
        "--window",
        metavar="DURATION",
        help="the window, e.g. 30m, 2h, 7d (default 30m; only the part with history is read)",
    )
    p.add_argument(
        "--end",
        metavar="TIME",
        help="where the window ends: now (default), now-2h, '2h ago', unix seconds or an ISO time",
    )
    p.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="the most a refresh may take (default: timeout in [fleet] of specwatch.toml, else 10)",
    )
    p.add_argument(
        "--step", metavar="DURATION", help="the step of the trend and of the batches (default: window / 60)"
    )
    p.add_argument(
        "--selector", metavar="MATCHERS", help="label matchers every query gets, e.g. 'job=~\"inference.*\"'"
    )
    p.add_argument("--by", action="append", metavar="LABEL", help="group rows by this label (repeatable)")
    p.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help="B − A between the instances matching two selectors, e.g. 'draft=\"v1\"' 'draft=\"v2\"'",
    )
    p.add_argument("--json", action="store_true", help="one JSON document")
    p.add_argument(
        "--table", action="store_true", help="print the table once (the default when not in a terminal)"
    )
    p.add_argument(
        "--refresh",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="the screen's refresh interval (default 5)",
    )
    p.add_argument(
        "--exit-on",
        choices=VERDICTS,
        metavar="VERDICT",
        help=f"with --compare: exit {EXIT_ON} when the verdict is VERDICT ({', '.join(VERDICTS)})",
    )
    p.add_argument("--config", metavar="FILE", help="specwatch.toml to use (default: the XDG config dir)")
    p.set_defaults(run=run)
    return p


def _secret(value: str | None, path: str | None, what: str) -> str | None:
    if path is None:
        return value
    try:
        return Path(path).expanduser().read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise CliError(
            f"specwatch fleet: cannot read {what} file {visible(path)}: {exc.strerror or exc}"
        ) from None


def setup(args: argparse.Namespace) -> tuple[Any, Any, float]:
    """(PromAPI, FleetQuery, timeout) from the arguments and ``[fleet]``."""
    from tui.core.config.settings import ConfigError, load_settings
    from tui.core.fleet.fetch import FleetQuery
    from tui.core.fleet.query import SelectorError, duration, end_of, labels_ok, matchers
    from tui.core.sources.prom.api import PromAPI, PromAuth, PromError

    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        raise CliError(f"specwatch fleet: {exc}") from None
    cfg = settings.fleet
    url = args.url or cfg.url
    if not url:
        raise CliError("specwatch fleet: give the Prometheus URL (or url in [fleet] of specwatch.toml)")
    try:
        window = duration(args.window or cfg.window)
        step = duration(args.step) if args.step else None
        end, end_ago = end_of(args.end) if args.end else (None, 0.0)
    except SelectorError as exc:
        raise CliError(f"specwatch fleet: {exc}") from None
    timeout = cfg.timeout if args.timeout is None else args.timeout
    if not 0 < timeout <= 600:
        raise CliError("specwatch fleet: --timeout takes a number of seconds > 0 (at most 600)")
    if args.exit_on and not args.compare:
        raise CliError("specwatch fleet: --exit-on needs --compare A B")
    try:
        selector = matchers(args.selector if args.selector is not None else cfg.selector)
        by = labels_ok(args.by or list(cfg.group_by))
        compare = tuple(matchers(s) for s in args.compare) if args.compare else None
    except SelectorError as exc:
        raise CliError(f"specwatch fleet: {exc}") from None
    auth = PromAuth(
        bearer_token=_secret(cfg.bearer_token, cfg.bearer_token_file, "bearer_token"),
        username=cfg.username,
        password=_secret(cfg.password, cfg.password_file, "password"),
        ca_file=cfg.ca_file,
        verify=not cfg.insecure_skip_verify,
    )
    try:
        api = PromAPI(url, auth, timeout=timeout)
    except PromError as exc:
        raise CliError(f"specwatch fleet: {exc}") from None
    fq = FleetQuery(window, step, selector, tuple(by), compare, end, end_ago)  # type: ignore[arg-type]
    return api, fq, timeout


async def _fetch(api: Any, fq: Any, timeout: float) -> Any:
    from tui.core.fleet.fetch import refresh
    from tui.core.sources.prom.api import PromError

    try:
        # the whole refresh (several rounds of queries) within --timeout
        return await asyncio.wait_for(refresh(api, fq), timeout)
    except TimeoutError:
        raise PromError("timeout", f"{api.shown}: no answer within {timeout:g} s (--timeout)") from None
    finally:
        await api.aclose()


def _screen(args: argparse.Namespace, api: Any, fq: Any, timeout: float) -> int:
    """The fleet screen in the app (a terminal, neither --json nor --table)."""
    from tui.cli.tui_commands import _run_app
    from tui.panes.fleet import FleetPlan
    from tui.panes.launch import LaunchPlan

    if args.refresh <= 0:
        raise CliError("specwatch fleet: --refresh takes a number of seconds > 0")
    url, auth = api.url, api.auth
    asyncio.run(api.aclose())  # the screen opens its own client in its event loop
    from tui.core.config.settings import load_settings

    logs = load_settings(args.config).fleet.logs
    fleet = FleetPlan(url, fq, auth, timeout, args.refresh, logs=logs)
    plan = LaunchPlan([], title="specwatch fleet", fleet=fleet)
    args.command = "fleet"
    args.save_dir = None
    args.theme = None
    return _run_app(plan, args)


def run(args: argparse.Namespace) -> int:
    from tui.cli.tui_commands import _isatty
    from tui.core.fleet.report import text_table, write_json
    from tui.core.sources.prom.api import PromError

    api, fq, timeout = setup(args)
    if (
        not args.json
        and not args.table
        and (_isatty(sys.__stdout__) or os.environ.get("SPECWATCH_FORCE_TUI"))
    ):
        return _screen(args, api, fq, timeout)
    try:
        # a stop signal cancels the fetch (tui.cli.signals): main() prints one line, 128 + signal
        fleet = asyncio.run(_fetch(api, fq, timeout))
    except PromError as exc:
        signals.check()  # an error caused by the stop: the stop's line instead
        print(f"specwatch fleet: {exc}", file=sys.stderr)
        return 1
    assert fleet is not None
    if args.json:
        write_json(fleet, sys.stdout)  # one instance at a time: bounded memory at 10,000
    else:
        sys.stdout.write(text_table(fleet))
        if not fleet.instances:
            from tui.core.formats import registry

            known = ", ".join(f.display for f in registry.FORMATS if f.fleet() is not None)
            print(
                f"specwatch fleet: no spec-decode series found ({known} or specwatch export) for this "
                "selector in the window",
                file=sys.stderr,
            )
    if args.exit_on and fleet.comparison is not None and fleet.comparison["verdict"] == args.exit_on:
        return EXIT_ON
    return 0
