"""``specwatch export --prometheus [ADDR:]PORT SOURCE...``: a headless daemon for fleets.

Follows its sources as ``specwatch stream`` does (files, globs, ``cmd:``, ``host:/path`` over
ssh, ``metrics+http://...`` endpoints, names from specwatch.toml) and serves specwatch's
statistics at ``http://ADDR:PORT/metrics`` with prometheus-client: per source its state, and
per source / segment / rank the numbers of ``specwatch summary --json`` (see
:mod:`tui.core.export.metrics` for every series and label). Nothing is computed per line for
the exporter: the statistics are read when Prometheus scrapes.

``PORT`` alone listens on 127.0.0.1 only (nothing leaves the machine unless asked);
``:PORT`` or ``0.0.0.0:PORT`` listens on every IPv4 interface, ``[::]:PORT`` on every interface,
``ADDR:PORT`` on that address. It runs until SIGTERM or Ctrl-C (exit 0), and keeps serving the
last numbers of sources that ended. Source events (connected, errors, idle, restarts) are
written to stderr, one line each, unless ``--quiet``.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import time
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from tui.cli import CliError
from tui.cli.live_args import add_live_arguments, live_setup
from tui.core.model.sanitize import visible

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

HELP = "serve live acceptance statistics to Prometheus (a headless daemon for fleets)"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "export",
        help=HELP,
        description=HELP + ": follows each SOURCE (as specwatch stream does) and serves the statistics of "
        "every source, segment and rank at http://ADDR:PORT/metrics. PORT alone listens on 127.0.0.1; "
        ":PORT or 0.0.0.0:PORT on every interface.",
    )
    p.add_argument("--prometheus", required=True, metavar="[ADDR:]PORT", help="where to serve /metrics")
    p.add_argument("sources", nargs="+", metavar="SOURCE")
    add_live_arguments(
        p,
        no_follow=False,
        idle_help="a source is idle after this long without a record (default 30; 0: never)",
    )
    p.add_argument(
        "--segments",
        type=int,
        default=3,
        metavar="N",
        help="export the newest N segments of each source that have records, plus the current one "
        "(default 3; older ones stay in the source totals)",
    )
    p.add_argument(
        "--host",
        default=None,
        metavar="NAME",
        help="the host label of local sources (default: this machine's name)",
    )
    p.add_argument("--quiet", action="store_true", help="do not write source events to stderr")
    p.set_defaults(run=run)
    return p


def parse_listen(text: str) -> tuple[str, int]:
    """``9477`` → (127.0.0.1, 9477); ``:9477`` → (0.0.0.0, 9477); ``[::]:9477``; ``ADDR:9477``."""
    t = text.strip()
    if t.startswith("["):
        addr, sep, port = t[1:].partition("]:")
        if not sep:
            raise ValueError(f"{text!r}: write an IPv6 address as [ADDR]:PORT")
    elif ":" in t:
        addr, _, port = t.rpartition(":")
        if ":" in addr:
            raise ValueError(f"{text!r}: write an IPv6 address as [ADDR]:PORT")
        addr = addr or "0.0.0.0"
    else:
        addr, port = "127.0.0.1", t
    if not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"{text!r}: give [ADDR:]PORT, e.g. 9477, :9477 or 0.0.0.0:9477")
    return addr, int(port)


def host_label(spec, local: str) -> str:
    """The machine a source's numbers come from: the SSH host, the scraped host, else this one."""
    from tui.core.sources.spec import kind_of

    return kind_of(spec).host(spec) or local


def run(args: argparse.Namespace) -> int:
    try:
        addr, port = parse_listen(args.prometheus)
    except ValueError as exc:
        raise CliError(f"specwatch export: {exc}") from None
    if args.segments < 1:
        raise CliError("specwatch export: --segments takes a number ≥ 1")
    start, specs, options = live_setup(args, "export")
    from tui.core.sources.spec import kind_of

    if args.exit_on_alert:
        raise CliError("specwatch export: --exit-on-alert is for specwatch stream (a daemon keeps serving)")

    if any(kind_of(s).reads_stdin for s in specs):
        raise CliError(
            "specwatch export: a daemon cannot read stdin (give files, cmd:, host:/path or metrics+http://)"
        )
    exporter = Exporter(
        specs,
        addr=addr,
        port=port,
        start=start,
        options=options,
        segments=args.segments,
        local_host=args.host or socket.gethostname(),
        quiet=args.quiet,
        alerting=args.alerting,
    )
    # A stop signal cancels the run (tui.cli.signals): the server and the sources close first,
    # then main() prints one line, 128 + signal.
    return asyncio.run(exporter.run())


class Exporter:
    def __init__(
        self,
        specs,
        *,
        addr: str,
        port: int,
        start: Any,
        options: dict[str, Any],
        segments: int = 3,
        local_host: str = "",
        quiet: bool = False,
        err=None,
        alerting: Any = None,
    ) -> None:
        from tui.core.export.metrics import Exported
        from tui.core.pipeline.follow import Followed
        from tui.core.sources.spec import kind_of, source_labels

        self.specs = specs
        self.addr, self.port = addr, port
        self.start = start
        self.options = options
        self.segments = segments
        self.quiet = quiet
        self.err = err or sys.stderr
        self.alerting = alerting  # tui.cli.alert_args.Alerting: rules, --on-alert
        labels = source_labels(specs)

        self.sources = [
            Exported(
                Followed(s.name, lab, track_arrivals=True),
                host_label(s, local_host),
                s.kind,
                kind_of(s).location(s),  # a daemon's cwd means nothing to a dashboard: absolute paths
            )
            for s, lab in zip(specs, labels)
        ]
        self.server: WSGIServer | None = None
        self.url = ""
        self.started = time.time()
        self._seg_said = [0] * len(specs)

    def serve(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """Start the HTTP server (a thread of prometheus-client); raises CliError when it cannot."""
        from prometheus_client import (
            CollectorRegistry,
            ProcessCollector,
            start_http_server,
        )
        from prometheus_client.core import GaugeMetricFamily

        from tui import __version__
        from tui.core.export.metrics import SpecwatchCollector

        def extra():
            info = GaugeMetricFamily(
                "specwatch_exporter_info", "The specwatch exporter (value 1).", labels=["version"]
            )
            info.add_metric([__version__], 1)
            started = GaugeMetricFamily(
                "specwatch_exporter_start_time_seconds", "When the exporter started (Unix time)."
            )
            started.add_metric([], self.started)
            return [info, started]

        registry = CollectorRegistry()
        ProcessCollector(registry=registry)  # the daemon's own memory and CPU (process_*)
        registry.register(
            SpecwatchCollector(lambda: self.sources, segments=self.segments, loop=loop, extra=extra)
        )
        try:
            self.server, _ = start_http_server(self.port, addr=self.addr, registry=registry)
        except OSError as exc:
            raise CliError(
                f"specwatch export: cannot listen on {self.addr}:{self.port}: {exc.strerror or exc}"
            ) from None
        port = self.server.server_port
        host = f"[{self.addr}]" if ":" in self.addr else self.addr
        self.url = f"http://{host}:{port}/metrics"

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    async def run(self) -> int:
        from tui.core.pipeline.follow import follow
        from tui.core.sources.spec import SourceSpecError, open_source

        loop = asyncio.get_running_loop()
        sources = []
        try:
            for spec in self.specs:
                sources.append(open_source(spec, follow=True, start=self.start, **self.options))
        except SourceSpecError as exc:
            for s in sources:
                await s.aclose()
            raise CliError(f"specwatch export: {exc}") from None
        self.serve(loop)
        self._say(f"serving {self.url} ({len(sources)} source{'s' if len(sources) != 1 else ''})")
        try:
            states = [ex.state for ex in self.sources]
            async with aclosing(follow(sources, states)) as batches:
                async for i, batch, items in batches:
                    self.sources[i].count(items)
                    self._log(i, batch, items)
                    self._alerts(i, items)
            self._say("every source has ended; serving their last numbers until stopped")
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            pass
        finally:
            self.close()
            if self.alerting is not None:
                self.alerting.finish()
        return 0

    def _alerts(self, i: int, items) -> None:
        """Alert rules see every record; an alert is one line on stderr (even with --quiet)
        and runs --on-alert."""
        if self.alerting is None:
            return
        from tui.core.alerts.engine import local_now
        from tui.core.model.records import Record

        name = self.sources[i].state.name
        arrival = local_now()
        for it, seg in items:
            if isinstance(it, Record):
                depth = self.sources[i].state.depth(seg)
                for a in self.alerting.engine.observe_record(name, it, seg, arrival, depth):
                    self.alerting.handle([a])
                    word = "ALERT" if a.state == "firing" else "alert resolved:"
                    print(f"specwatch export: {word} {visible(a.message)}", file=self.err, flush=True)

    # -- stderr --------------------------------------------------------------------------------
    def _say(self, text: str) -> None:
        if not self.quiet:
            # labels, paths and remote messages come from outside: shown, never obeyed
            print(f"specwatch export: {visible(text)}", file=self.err, flush=True)

    def _log(self, i: int, batch, items) -> None:
        if self.quiet:
            return
        from tui.core.model.records import Marker
        from tui.core.sources.base import EventKind, SourceEvent

        label = self.sources[i].state.label
        if isinstance(batch, SourceEvent):
            if batch.kind in (EventKind.STDERR, EventKind.SEEK):
                return
            if batch.kind == EventKind.RECONNECTING and batch.data.get("attempt", 1) > 2:
                return
            self._say(f"[{label}] {batch.kind.value}: {batch.message}")
            return
        for it, seg in items:
            if isinstance(it, Marker) and seg > self._seg_said[i]:
                self._seg_said[i] = seg
                self._say(f"[{label}] segment {seg} opened by {it.kind}")
