"""The TUI commands: ``watch``, ``compare``, ``replay`` and ``demo``.

``specwatch SOURCE...`` is ``specwatch watch SOURCE...`` and ``specwatch`` alone is the demo
(see :func:`tui.cli._route`). Textual is imported inside ``run`` only, so the headless commands
never load it.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from tui.cli import CliError

SOURCE_HELP = (
    "SOURCE is a file (followed by name, like tail -F), a quoted glob (follows the newest match), "
    "- (stdin), cmd:'COMMAND', host:/path (ssh), or a name from specwatch.toml; LABEL=SOURCE names "
    "the pane."
)


def _common(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("display")
    g.add_argument("--theme", metavar="NAME", help="theme for this run (t picks and remembers one)")
    g.add_argument(
        "--save-dir",
        metavar="DIR",
        default=None,
        help="where s (SVG screenshot) and e (CSV export) write (default: the current directory)",
    )


def _live(p: argparse.ArgumentParser) -> None:
    from tui.cli.live_args import add_live_arguments

    add_live_arguments(p)


def add_parser(sub: Any) -> None:
    w = sub.add_parser(
        "watch",
        help="watch live logs, one pane per source (the default command)",
        description="Watch live logs: one pane per source, a grid for more than two. " + SOURCE_HELP,
    )
    w.add_argument("sources", nargs="+", metavar="SOURCE")
    _live(w)
    _common(w)
    w.set_defaults(run=run_watch)

    c = sub.add_parser(
        "compare",
        help="two sources side by side with a live B − A comparison",
        description="Two sources side by side, a B − A bar (accept len, 95%% CI, verdict) and an "
        "overlay chart. A and B are sources, or one pair name from specwatch.toml. " + SOURCE_HELP,
    )
    c.add_argument("sources", nargs="+", metavar="A B")
    _live(c)
    _common(c)
    c.set_defaults(run=run_compare)

    r = sub.add_parser(
        "replay",
        help="replay saved logs with their original pacing (or faster)",
        description="Replay saved logs in the same screens, paced by their timestamps. Two files "
        "are compared (B − A bar) unless --no-compare. LABEL=FILE names a pane; a quoted glob replays all "
        "its matches as one log, oldest first (a rotated set), a name from specwatch.toml its file. "
        "Compressed files (gzip, bzip2, xz, zstd) are read as they are.",
    )
    r.add_argument("files", nargs="+", metavar="FILE")
    pace = r.add_mutually_exclusive_group()
    pace.add_argument(
        "--speed", type=float, default=1.0, metavar="X", help="play X times as fast (default 1)"
    )
    pace.add_argument("--max", action="store_true", help="as fast as possible")
    r.add_argument(
        "--max-gap",
        type=float,
        default=None,
        metavar="SECONDS",
        help="cut longer pauses of the log to this many seconds (idle nights)",
    )
    r.add_argument("--no-compare", action="store_true", help="two files side by side without the B − A bar")
    r.add_argument("--config", metavar="FILE", help="specwatch.toml to use (default: the XDG config dir)")
    from tui.cli.alert_args import add_alert_arguments

    add_alert_arguments(r)
    from tui.cli.window_args import add_window_arguments

    add_window_arguments(r)
    _common(r)
    r.set_defaults(run=run_replay)

    d = sub.add_parser(
        "demo",
        help="the bundled broken-vs-fixed EAGLE-3 sample, replayed (no setup)",
        description="Replays the two runs of the bundled sample log (a broken EAGLE-3 config, "
        "then the restart with the fixed one) side by side.",
    )
    d.add_argument("--speed", type=float, default=None, metavar="X", help="replay speed (default 20)")
    _common(d)
    d.set_defaults(run=run_demo)


# -- building the plan -------------------------------------------------------------------------
def _live_plan(args: argparse.Namespace, compare: bool):
    from tui.cli.live_args import live_setup
    from tui.core.sources.spec import kind_of
    from tui.panes.labels import title_of
    from tui.panes.launch import LaunchPlan, live_panes

    cmd = "compare" if compare else "watch"
    start, specs, options = live_setup(args, cmd)
    if compare and len(specs) != 2:
        raise CliError(f"specwatch compare: needs two sources (A B) or one pair name; got {len(specs)}")
    stdin_fd = None
    if any(kind_of(s).reads_stdin for s in specs) and not _isatty(sys.__stdin__):
        stdin_fd = _keys_from_tty(cmd)
    panes = live_panes(specs, follow=not args.no_follow, start=start, options=options, stdin_fd=stdin_fd)
    title = "specwatch compare" if compare else "specwatch"
    plan = LaunchPlan(panes, compare=compare, title=f"{title}: " + title_of([p.label for p in panes]))
    return _with_alerts(plan, args, [s.name for s in specs], cmd)


def _with_alerts(plan, args: argparse.Namespace, names: list[str], cmd: str):
    """The plan with the run's alert rules (``args.alerting``); ``--on-alert`` commands still
    running are waited for a moment at exit."""
    alerting = getattr(args, "alerting", None)
    if getattr(args, "exit_on_alert", False):
        raise CliError(f"specwatch {cmd}: --exit-on-alert is for specwatch stream (the app keeps running)")
    if alerting is not None:
        plan.alerting, plan.alert_names = alerting, names
        plan.cleanup.append(alerting.finish)
    return plan


def _keys_from_tty(cmd: str) -> int:
    """``kubectl logs -f POD | specwatch -``: the log is on stdin, so the keys must come from the
    terminal. Moves the pipe to another descriptor (returned) and puts /dev/tty on stdin."""
    try:
        tty = os.open("/dev/tty", os.O_RDWR)
    except OSError:
        raise CliError(
            f"specwatch {cmd}: reading the log from stdin needs a terminal for the keys "
            "(no /dev/tty); use specwatch stream -"
        ) from None
    fd = os.dup(0)
    os.dup2(tty, 0)
    os.close(tty)
    return fd


def _replay_plan(args: argparse.Namespace):
    from tui.cli.config_arg import config_ref
    from tui.core.sources.labels import Named, distinct_labels
    from tui.core.sources.spec import SourceSpecError, expand_source_args, kind_of
    from tui.panes.labels import title_of
    from tui.panes.launch import LaunchPlan, replay_pane

    if args.speed is not None and not args.speed > 0:
        raise CliError("specwatch replay: --speed takes a number > 0 (or use --max)")
    if args.max_gap is not None and args.max_gap <= 0:
        raise CliError("specwatch replay: --max-gap takes a positive number of seconds")
    from tui.cli.alert_args import alert_setup

    try:
        config = config_ref(args)
        specs = expand_source_args(args.files, config)
    except SourceSpecError as exc:
        raise CliError(f"specwatch replay: {exc}") from None
    args.alerting = alert_setup(args, specs, "replay", config)
    from tui.cli.window_args import window_options

    opts = window_options(args, "replay")
    items = []
    for spec in specs:
        paths = kind_of(spec).whole_files(spec, history=opts["history"])
        if not paths:
            raise CliError(
                f"specwatch replay: {spec.text}: replays need local files (use specwatch watch for streams)"
            )
        for path in paths:
            if not os.path.exists(path):
                raise CliError(f"specwatch replay: {path}: no such file")
            if not os.access(path, os.R_OK):
                raise CliError(f"specwatch replay: {path}: permission denied")
        fixed = spec.label or spec.config_name
        items.append(
            (Named(fixed or os.path.basename(paths[-1]), bool(fixed), os.path.abspath(paths[-1])), paths)
        )
    labels = distinct_labels([named for named, _ in items])
    speed = None if args.max else args.speed
    panes = [
        replay_pane(paths[-1], lab, speed=speed, max_gap=args.max_gap, paths=paths, window=opts.get("window"))
        for lab, (_, paths) in zip(labels, items)
    ]
    compare = len(panes) == 2 and not args.no_compare
    # the speed is in each pane's status (it changes with + and -), not in the title
    plan = LaunchPlan(panes, compare=compare, title="specwatch replay: " + title_of(labels))
    return _with_alerts(plan, args, [s.name for s in specs], "replay")


def _demo_plan(args: argparse.Namespace):
    from tui.panes.launch import DEMO_SPEED, demo_plan

    speed = DEMO_SPEED if args.speed is None else args.speed
    if not speed > 0:
        raise CliError("specwatch demo: --speed takes a number > 0")
    try:
        return demo_plan(speed)
    except (FileNotFoundError, OSError) as exc:
        raise CliError(f"specwatch demo: {exc}") from None


def _isatty(f) -> bool:
    try:
        return f is not None and os.isatty(f.fileno())
    except (OSError, ValueError):
        return False


def _run_app(plan, args: argparse.Namespace) -> int:
    if not (_isatty(sys.__stdout__) or _isatty(sys.__stderr__)) and not os.environ.get("SPECWATCH_FORCE_TUI"):
        raise CliError(
            f"specwatch {args.command}: needs a terminal (for scripts: specwatch stream / summary)"
        )
    from tui.app import SpecwatchApp
    from tui.cli import signals

    app = SpecwatchApp(plan, save_dir=args.save_dir, theme=args.theme)
    signals.on_stop(app.stop_signal)  # a stop signal asks the app to exit (the terminal is restored)
    signals.watch_terminal()  # the terminal gone (EOF, EIO): a SIGHUP, the process gone by a deadline
    try:
        code = app.run()
    finally:
        signals.on_stop(None)
        for fn in plan.cleanup:
            fn()
    signals.check()  # stopped by a signal: main() prints one line, 128 + signal
    return int(code or 0) if app.return_code in (None, 0) else int(app.return_code)


def run_watch(args: argparse.Namespace) -> int:
    return _run_app(_live_plan(args, compare=False), args)


def run_compare(args: argparse.Namespace) -> int:
    return _run_app(_live_plan(args, compare=True), args)


def run_replay(args: argparse.Namespace) -> int:
    return _run_app(_replay_plan(args), args)


def run_demo(args: argparse.Namespace) -> int:
    return _run_app(_demo_plan(args), args)
