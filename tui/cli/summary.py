"""``specwatch summary [--json] SOURCE...``: statistics of whole logs, for people and scripts."""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
from typing import Any

from tui.core import draft_config
from tui.core.summary import (
    comparison,
    segment_comparison,
    summarize_file,
    summarize_stream,
)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "summary",
        help="statistics of whole logs (per source, per segment, A/B comparison)",
        description="Read each SOURCE once (a file, or - for stdin; label=SOURCE names it) and print "
        "acceptance statistics per source and per segment; with two sources, B − A.",
    )
    p.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help="[label=]PATH, - (stdin), host:/path (read once over ssh; a quoted glob reads the newest match), "
        "or metrics+http://HOST:PORT/metrics (scraped for --duration seconds)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--workers", type=int, default=None, help="scanner processes for large files (default: cores, max 4)"
    )
    p.add_argument(
        "--duration",
        type=float,
        default=None,
        metavar="SECONDS",
        help="metrics sources: scrape for this long, every --scrape-interval (default 10 s: a baseline and "
        "two 5 s windows); 0 reads once (the server's lifetime totals only)",
    )
    from tui.cli.metrics_args import add_metrics_arguments
    from tui.cli.ssh_args import add_ssh_arguments

    add_ssh_arguments(p)
    add_metrics_arguments(p)
    p.set_defaults(run=run)


def split_label(spec: str) -> tuple[str | None, str]:
    """``label=path`` → (label, path); a path that exists as written wins over a label."""
    if "=" in spec and not os.path.exists(spec):
        label, _, rest = spec.partition("=")
        if label and "/" not in label and rest:
            return label, rest
    return None, spec


def _clean(obj: Any) -> Any:
    """JSON has no NaN/inf: such values become null (never a made-up number)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def _remote_target(path: str):
    """The SSH target of ``host:/path`` (None for local paths and stdin)."""
    if path == "-" or os.path.exists(path):
        return None
    from tui.core.sources.spec import SourceSpecError, parse_source_spec

    try:
        spec = parse_source_spec(path)
    except SourceSpecError:
        return None
    return spec.ssh if spec.kind == "ssh" else None


def _summarize_remote(target: Any, label: str | None, text: str, args: argparse.Namespace):
    """The remote file streamed once over ssh; its draft configs read on the same host."""
    from tui.cli import CliError
    from tui.cli.ssh_args import ssh_options
    from tui.core.sources.ssh import settings_from_options
    from tui.core.sources.ssh_summary import RemoteReadError, summarize_ssh

    settings = settings_from_options(ssh_options(args))
    name = label or f"{target.host}:{os.path.basename(target.path)}"
    try:
        return summarize_ssh(target, name, text, settings)
    except RemoteReadError as exc:
        raise CliError(f"specwatch summary: {exc.message}") from None


def _summarize_metrics(label: str | None, text: str, args: argparse.Namespace):
    """A metrics endpoint, scraped for --duration seconds (see :mod:`tui.core.metrics_summary`)."""
    from tui.cli import CliError
    from tui.cli.metrics_args import metrics_options
    from tui.cli.ssh_args import ssh_options
    from tui.core.metrics_summary import DEFAULT_DURATION, summarize_metrics
    from tui.core.sources.spec import SourceSpecError, parse_source_spec

    duration = DEFAULT_DURATION if args.duration is None else args.duration
    if duration < 0:
        raise CliError("specwatch summary: --duration takes a number of seconds ≥ 0")
    try:
        spec = parse_source_spec(text)
    except SourceSpecError as exc:
        raise CliError(f"specwatch summary: {exc}") from None
    options = {**ssh_options(args), **metrics_options(args)}
    ms = summarize_metrics(spec, label or spec.name, duration=duration, options=options)
    if ms.followed.error and not ms.stats.records and not (ms.source and ms.source.lifetime):
        raise CliError(f"specwatch summary: {ms.followed.error}")
    return ms


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run(args: argparse.Namespace) -> int:
    # Ctrl-C stops at once, also inside the remote reader's event loop (asyncio.run would only
    # cancel its task, which waits for the chunk being parsed): main() prints one line, exit 130.
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return _run(args)
    try:
        signal.signal(signal.SIGINT, _interrupt)
    except ValueError:  # not the main thread
        return _run(args)
    try:
        return _run(args)
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _run(args: argparse.Namespace) -> int:
    from tui.cli import CliError
    from tui.core.sources.metrics import is_metrics

    specs = [split_label(s) for s in args.sources]
    if sum(1 for _, p in specs if p == "-") > 1:
        raise CliError("specwatch summary: stdin (-) can be read only once")
    results = []
    for label, path in specs:
        if is_metrics(path):
            results.append(_summarize_metrics(label, path, args))
            continue
        remote = _remote_target(path)
        if remote is not None:
            results.append(_summarize_remote(remote, label, path, args))
            continue
        try:
            if path == "-":
                s = summarize_stream(sys.stdin.buffer, "-", label or "stdin")
            else:
                if os.path.isdir(path):
                    raise CliError(f"specwatch summary: {path}: is a directory")
                s = summarize_file(path, label or os.path.basename(path), source=path, workers=args.workers)
        except FileNotFoundError:
            raise CliError(f"specwatch summary: {path}: no such file") from None
        except PermissionError:
            raise CliError(f"specwatch summary: {path}: permission denied") from None
        except IsADirectoryError:
            raise CliError(f"specwatch summary: {path}: is a directory") from None
        except OSError as exc:
            raise CliError(f"specwatch summary: {path}: {exc.strerror or exc}") from None
        draft_config.attach(s.stats)  # local sources: the draft's config.json on this machine
        results.append(s)
    sources: list[dict] = []
    out: dict[str, Any] = {"sources": sources, "comparison": None}
    for s in results:
        d = s.result()
        d["segment_comparison"] = segment_comparison(s.stats)
        sources.append(d)
    if len(results) == 2:
        out["comparison"] = comparison(results[0].stats, results[1].stats)
    out = _clean(out)
    if args.json:
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    else:
        from tui.cli.summary_text import render
        from tui.core.sanitize import visible

        # Labels, paths, config values and messages in it come from outside: shown, never obeyed.
        sys.stdout.write(visible(render(out), keep_newlines=True))
    sys.stdout.flush()
    return 0
