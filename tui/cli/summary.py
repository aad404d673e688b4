"""``specwatch summary [--json] SOURCE...``: statistics of whole logs, for people and scripts."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "summary",
        help="statistics of whole logs (per source, per segment, A/B comparison)",
        description="Read each SOURCE once and print acceptance statistics per source and per segment; "
        "with two sources, B − A. SOURCE is any source text the other commands take (label=SOURCE names it).",
    )
    p.add_argument(
        "sources",
        nargs="*",
        metavar="SOURCE",
        help="[label=]PATH, - (stdin), a quoted glob (all its matches as one log, oldest first), cmd:'COMMAND' (run, its output read "
        "to the end), host:/path (read once over ssh), a name or pair from specwatch.toml, or "
        "metrics+http://HOST:PORT/metrics (scraped for --duration seconds)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object (the same as --format json)")
    p.add_argument(
        "--json-schema",
        action="store_true",
        help='print the JSON Schema of that object (its "schema" key is the version) and exit',
    )
    p.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="text tables (default), one JSON object, or GitHub Markdown (for a pull-request comment)",
    )
    p.add_argument(
        "--allow-empty",
        action="store_true",
        help="exit 0 when a source has no speculative-decoding metric (an empty file, the wrong file, a "
        "window with no line): by default that is exit status 2, with a warning on stderr",
    )
    p.add_argument("--config", metavar="FILE", help="specwatch.toml to use (default: the XDG config dir)")
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
    from tui.cli.window_args import add_window_arguments

    add_window_arguments(p)
    add_ssh_arguments(p)
    add_metrics_arguments(p)
    p.set_defaults(run=run)


def _clean(obj: Any) -> Any:
    """JSON has no NaN/inf: such values become null (never a made-up number)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def _read_warnings(s: Any, src: dict) -> list[str]:
    """The warnings of one source's files (:mod:`tui.core.sources.logset`): one that does not
    look like text (and is no known compression), a compressed stream corrupt or cut short;
    each says what was read."""
    found = "no metric line found" if not src.get("records") else f"{src['records']} metric lines read"
    out = [f"{w}; {found}" for w in getattr(s, "input_warnings", ())]
    synthetic = [g for g in src.get("segments") or () if g.get("synthetic")]
    if synthetic:
        name = src.get("label") or src.get("source")
        said = (synthetic[0].get("config") or {}).get("label") or ""
        seg = ", ".join(str(g["index"]) for g in synthetic)
        out.append(
            f"{name}: SYNTHETIC acceptance in segment {seg} (a benchmarking mode: drawn at random, not "
            f"measured; {said}): its numbers are shown, no verdict or alert uses them"
        )
    return out


def _only_synthetic(stats: Any) -> bool:
    """Every segment with acceptance is a synthetic acceptance run: nothing to compare."""
    measured = [s for s in stats.segments if s.all.accept_len.n or s.all.pooled_len.n]
    return bool(measured) and all(s.config.synthetic for s in measured)


def _empty_warning(src: dict) -> str | None:
    """The warning for a source with no metric line (so nothing for a gate to judge): an empty
    file, any text that is not a server's log, a window with no line, an endpoint without
    spec-decode counters. None when it has metric lines (a baseline without speculation has its
    throughput), requests, or lifetime totals (a metrics source read once), or when its files' own
    warning (not a text log, a damaged compressed file) says why already."""
    lifetime = (src.get("metrics") or {}).get("lifetime") or {}
    if src.get("records") or (src.get("requests") or {}).get("n") or src.get("warnings") or lifetime:
        return None
    name = src.get("source") or src.get("label")
    w = src.get("window") or {}
    lines = src.get("lines") or 0
    if w and not lines:
        first, last = w.get("log_first"), w.get("log_last")
        span = (
            f"the log's stamps run from {first} " + (f"to {last}" if last else "on")
            if first
            else "the log has no timestamp"
        )
        return (
            f"{name}: no line in the window {w.get('since') or 'start'} → {w.get('until') or 'end'}; {span}"
        )
    said = [
        e.split(": ", 1)[-1] for e in (src.get("metrics") or {}).get("events", ()) if e.startswith("error: ")
    ]
    if said:
        return f"{name}: no speculative-decoding metric: {said[-1]}"
    if not lines:
        return f"{name}: empty (0 lines read): no metric line"
    told = [
        x["message"]
        for seg in src.get("segments") or ()
        for x in seg.get("diagnostics") or ()
        if x.get("code") == "server_note"
    ]
    from tui.core.sources.identity import plural

    read = f"{plural(lines, 'line')} read"
    if told:  # the server said why
        return f"{name}: no speculative-decoding metric ({read}, no metric line): {told[-1]}"
    return f"{name}: no speculative-decoding metric found ({read}, no metric line): is it a server's log, with speculation on?"


def run(args: argparse.Namespace) -> int:
    # A stop signal (tui.cli.signals) stops a local file's reading between two chunks (at once in
    # a wait for a scanning thread or a pipe), and cancels the reading task of a remote or
    # /metrics source: main() prints one line, 128 + signal.
    from tui.cli import CliError
    from tui.cli.config_arg import config_ref
    from tui.cli.metrics_args import metrics_options
    from tui.cli.ssh_args import ssh_options
    from tui.core.sources.spec import (
        SourceSpecError,
        SummaryError,
        expand_source_args,
        source_labels,
        summarize_source,
    )

    if args.json_schema:
        from tui.core.model.sanitize import json_text
        from tui.core.model.summary import json_schema

        sys.stdout.write(json_text(json_schema(), indent=2) + "\n")
        return 0
    if not args.sources:
        raise CliError("specwatch summary: the following arguments are required: SOURCE (or --json-schema)")
    args.json = args.json or args.format == "json"  # --json is --format json
    try:
        specs = expand_source_args(args.sources, config_ref(args))
    except SourceSpecError as exc:
        raise CliError(f"specwatch summary: {exc}") from None
    from tui.cli.window_args import window_options

    options = {
        **window_options(args, "summary"),
        **ssh_options(args),
        **metrics_options(args),
        "workers": args.workers,
        "duration": args.duration,
    }
    results = []
    for spec, label in zip(specs, source_labels(specs)):
        try:
            results.append(summarize_source(spec, label, **options))
        except (SourceSpecError, SummaryError) as exc:
            raise CliError(f"specwatch summary: {exc}") from None
    from tui.core.model.sanitize import visible
    from tui.core.stats.verdicts import comparison, segment_comparison

    sources: list[dict] = []
    unreadable = False
    for s in results:
        d = s.result()
        d["segment_comparison"] = segment_comparison(s.stats)
        d["warnings"] = _read_warnings(s, d)
        for w in d["warnings"]:
            print(visible(f"specwatch summary: warning: {w}"), file=sys.stderr)
        unreadable = unreadable or bool(d["warnings"] and not d.get("records"))
        empty = _empty_warning(d)
        if empty is not None:
            print(visible(f"specwatch summary: warning: {empty}"), file=sys.stderr)
            unreadable = unreadable or not args.allow_empty
        sources.append(d)
    both = None
    if len(results) == 2 and not any(_only_synthetic(r.stats) for r in results):
        both = comparison(results[0].stats, results[1].stats)
    from tui.core.model.summary import Summary

    model = Summary.of(_clean(sources), _clean(both))  # the typed result every output reads
    if args.format == "markdown" and not args.json:
        from tui.cli.summary_markdown import render as markdown

        sys.stdout.write(markdown(model))
        sys.stdout.flush()
        return 2 if unreadable else 0
    if args.json:
        from tui.core.model.sanitize import json_text

        sys.stdout.write(json_text(model.to_json()) + "\n")
    else:
        from tui.cli.summary_text import render
        from tui.core.model.sanitize import visible

        # Labels, paths, config values and messages in it come from outside: shown, never obeyed.
        sys.stdout.write(visible(render(model), keep_newlines=True))
    sys.stdout.flush()
    return 2 if unreadable else 0
