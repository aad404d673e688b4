"""Metrics sources: a server's Prometheus ``/metrics``, scraped every few seconds, turned into
records (see :mod:`tui.core.sources.prom.exposition` for what is read and how windows are computed).

Source texts (``[LABEL=]`` in front as for every source):

* ``metrics+http://HOST[:PORT][/PATH]`` and ``metrics+https://...`` (PATH defaults to
  ``/metrics``; HTTPS verifies the certificate and the host name with the system's CAs). When the
  default ``/metrics`` answers JSON, the source moves to the path a family's data names for its
  Prometheus text (``[metrics] json_moves_to``, with ``json_is`` saying what the JSON was:
  :func:`tui.core.formats.families.json_metrics_path`), and says so;
* ``metrics+ssh://[USER@]HOST[:SSHPORT]/[DEST:]PORT[/PATH]``: the port is reached on (or from)
  the SSH host, through asyncssh local port forwarding over the shared connection of
  :mod:`tui.core.sources.ssh.connect` (the same one the host's log sources use). ``metrics+ssh://gpu1/8000`` is
  ``http://127.0.0.1:8000/metrics`` as seen on gpu1; ``metrics+ssh://gpu1/10.0.0.5:8000/stats``
  reaches 10.0.0.5:8000 from gpu1.

Options (``open_source(..., **options)``): ``scrape_interval`` (seconds, default 5),
``scrape_timeout`` (default: the interval, between 1 and 10 s), ``idle_after`` (seconds without a
record before an ``idle`` event), ``max_scrapes`` (stop after that many successful scrapes), and the
SSH options of the SSH sources.

Events: ``connected`` at the first good scrape (and again after failures), ``error`` (never
fatal for a scrape that failed: the source keeps scraping at its interval, with a
``reconnecting`` event each time) and ``idle``. A fatal ``error`` ends the source: an SSH host key
or login refused, or, when not following (``follow=False``), a first scrape that failed.
``follow=False`` scrapes twice (a baseline and one window) and ends with ``eof``.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tui.core.formats import families
from tui.core.sources.aio import wait_for
from tui.core.sources.base import (
    Batch,
    EventKind,
    GeneratorSource,
    LineBatch,
    SourceEvent,
)
from tui.core.sources.prom.http import HttpClient, HttpError, HttpResponse, Sink
from tui.core.sources.target import METRICS_SCHEMES, SourceSpec, SourceSpecError, SshTarget

if TYPE_CHECKING:
    from tui.core.sources.prom.exposition import Converter
    from tui.core.sources.prom.sample_stream import SampleStream
    from tui.core.sources.ssh.connect import SharedConnection

KINDS = METRICS_SCHEMES
DEFAULT_INTERVAL = 5.0
DEFAULT_PATH = "/metrics"


@dataclass(frozen=True, slots=True)
class MetricsTarget:
    scheme: str  # http or https (the protocol spoken to the server)
    host: str  # the server as seen from where the request leaves (for ssh: from the SSH host)
    port: int
    path: str  # with the query, as sent
    ssh: SshTarget | None = None
    default_path: bool = False  # no PATH was given: /metrics, or /prometheus/metrics if that is JSON

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}{self.path}"

    @property
    def where(self) -> str:
        if self.ssh is None:
            return self.url
        user = f"{self.ssh.user}@" if self.ssh.user else ""
        port = f":{self.ssh.port}" if self.ssh.port else ""
        return f"{self.url} via ssh {user}{self.ssh.host}{port}"

    @property
    def host_label(self) -> str:
        """The machine the numbers come from (for exporter labels)."""
        return self.ssh.host if self.ssh is not None else self.host


def parse_metrics_target(text: str) -> MetricsTarget:
    """Reads ``metrics+http(s)://...`` or ``metrics+ssh://...``; raises :class:`SourceSpecError`."""
    scheme, sep, _ = text.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in KINDS:
        raise SourceSpecError(
            f"{text}: not a metrics source (metrics+http://HOST:PORT/metrics, metrics+https://..., "
            "metrics+ssh://HOST/PORT)"
        )
    try:
        u = urlsplit(text)
        port = u.port
    except ValueError as exc:
        raise SourceSpecError(f"{text}: not a valid address ({exc})") from None
    if not u.hostname:
        raise SourceSpecError(f"{text}: no host")
    if scheme == "metrics+ssh":
        return _ssh_target(text, u, port)
    if u.username or u.password:
        raise SourceSpecError(f"{text}: credentials in the address are not supported")
    default = u.path in ("", "/")
    path = DEFAULT_PATH if default else u.path
    if u.query:
        path += "?" + u.query
    proto = scheme.split("+", 1)[1]
    return MetricsTarget(proto, u.hostname, port or (443 if proto == "https" else 80), path, None, default)


def _ssh_target(text: str, u, ssh_port: int | None) -> MetricsTarget:
    first, _, rest = u.path.lstrip("/").partition("/")
    dest, port_text = "127.0.0.1", first
    if first.startswith("["):  # [v6addr]:PORT
        addr, _, p = first[1:].partition("]:")
        dest, port_text = addr, p
    elif ":" in first:
        dest, _, port_text = first.rpartition(":")
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise SourceSpecError(
            f"{text}: give the port to reach on the SSH host: "
            "metrics+ssh://[USER@]HOST[:SSHPORT]/[DEST:]PORT[/PATH], e.g. metrics+ssh://gpu1/8000"
        )
    path = "/" + rest if rest else DEFAULT_PATH
    if u.query:
        path += "?" + u.query
    return MetricsTarget(
        "http",
        dest or "127.0.0.1",
        int(port_text),
        path,
        SshTarget(u.hostname, f"(port {port_text})", u.username, ssh_port),
        not rest,
    )


class _Fatal(Exception):
    pass


class MetricsSource(GeneratorSource):
    """Scrapes one ``/metrics`` endpoint at a fixed interval and yields metrics batches."""

    def __init__(
        self,
        target: MetricsTarget,
        name: str,
        *,
        follow: bool = True,
        interval: float = DEFAULT_INTERVAL,
        timeout: float | None = None,
        idle_after: float | None = 30.0,
        max_scrapes: int | None = None,
        ssh_options: dict[str, Any] | None = None,
    ) -> None:
        if not interval > 0:
            raise SourceSpecError(f"{name}: the scrape interval must be > 0 (got {interval})")
        self.target = target
        self.name = name
        self.where = target.where
        self.follow = follow
        self.interval = interval
        self.timeout = timeout if timeout else max(1.0, min(10.0, interval))
        self.idle_after = idle_after
        self.max_scrapes = max_scrapes if follow else (max_scrapes or 2)
        self.error: str | None = None
        self.lifetime: dict[str, dict] = {}  # vLLM V1 totals since start, per rank, at the last scrape
        self.scrapes = 0
        self.failures = 0
        self._ssh_options = ssh_options or {}
        self._tls = ssl.create_default_context() if target.scheme == "https" else None
        self._http: HttpClient | None = None  # one client for the source's life (connections kept)
        self._gen: AsyncIterator[Batch] | None = None
        self._shared: SharedConnection | None = None
        self._listener: Any = None  # asyncssh's SSHListener and connection, once forwarding
        self._listener_conn: Any = None
        self._line_no = 0
        self._offset = 0

    async def _after_close(self) -> None:
        await self._close_ssh()
        await self._close_http()

    async def _close_http(self) -> None:
        client, self._http = self._http, None
        if client is not None:
            await client.aclose()

    def _event(self, kind: EventKind, message: str = "", **data) -> SourceEvent:
        return SourceEvent(self.name, kind, message, self.target.url, data=data)

    # -- the loop -------------------------------------------------------------------------------
    async def _run(self) -> AsyncIterator[Batch]:
        from tui.core.sources.prom.exposition import Converter, MetricsParseError

        conv = Converter()
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        up = False
        said_error: str | None = None
        said_note: str | None = None
        last_record = time.monotonic()
        idle_said = False
        moved = ""  # why the path changed (a family's data says where), said in the first connected event
        said_capped = ""
        try:
            while True:
                wait = next_at - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                next_at = max(next_at + self.interval, loop.time())
                try:
                    page = await self._fetch(conv)
                    json_path = families.json_metrics_path()  # a family's server that moves them
                    if page.json and self.target.default_path and json_path is not None:
                        query = self.target.path.partition("?")[2]
                        path = json_path[0] + ("?" + query if query else "")
                        self.target = replace(self.target, path=path, default_path=False)
                        self.where = self.target.where
                        moved = f"; {DEFAULT_PATH} answered JSON, as {json_path[1]} do"
                        page = await self._fetch(conv)
                    result = conv.feed_samples(page.close(), wall=time.time(), mono=time.monotonic())
                except _Fatal as exc:
                    self.error = str(exc)
                    yield self._event(EventKind.ERROR, str(exc), fatal=True)
                    return
                except (HttpError, MetricsParseError) as exc:
                    text = getattr(exc, "message", None) or str(exc)
                    msg = text if getattr(exc, "kind", "") == "ssh" else f"{self.target.url}: {text}"
                    self.failures += 1
                    if not self.follow and not up and self.scrapes == 0:
                        self.error = msg
                        yield self._event(
                            EventKind.ERROR, msg, fatal=True, reason=getattr(exc, "kind", "parse")
                        )
                        return
                    if msg != said_error:
                        said_error = msg
                        yield self._event(
                            EventKind.ERROR,
                            msg + " (retrying)",
                            fatal=False,
                            reason=getattr(exc, "kind", "parse"),
                        )
                    up = False
                    yield self._event(
                        EventKind.RECONNECTING,
                        f"scraping again in {self.interval:g} s (attempt {self.failures + 1})",
                        attempt=self.failures + 1,
                        delay=self.interval,
                    )
                    continue
                self.scrapes += 1
                now = time.monotonic()
                if not up:
                    again = self.failures > 0
                    up, said_error, self.failures = True, None, 0
                    what = ("; ".join(result.found) or "no speculative-decoding metric yet") + moved
                    yield self._event(
                        EventKind.CONNECTED,
                        f"{'scraping again' if again else 'scraping'} "
                        f"{self.where} every {self.interval:g} s ({what})",
                        reconnect=again,
                        found=list(result.found),
                    )
                capped = page.capped()
                if capped and capped != said_capped:
                    yield self._event(
                        EventKind.ERROR, f"{self.target.url}: {capped}", fatal=False, reason="too_many_series"
                    )
                said_capped = capped
                if result.note and result.note != said_note:
                    said_note = result.note
                    yield self._event(
                        EventKind.ERROR, f"{self.target.url}: {result.note}", fatal=False, reason="no_metrics"
                    )
                elif not result.note:
                    said_note = None
                if result.lifetime:
                    self.lifetime = result.lifetime
                if result.lines:
                    yield self._batch(result.lines)
                    last_record, idle_said = now, False
                elif self.idle_after and not idle_said and now - last_record >= self.idle_after:
                    idle_said = True
                    yield self._event(
                        EventKind.IDLE,
                        f"no decoding for {now - last_record:.0f} s (no new decode interval in the metrics)",
                        seconds=round(now - last_record, 1),
                    )
                if self.max_scrapes and self.scrapes >= self.max_scrapes:
                    yield self._event(EventKind.EOF, f"{self.scrapes} scrapes done")
                    return
        finally:
            await self._close_ssh()
            await self._close_http()

    def _batch(self, lines: list[str]) -> LineBatch:
        offsets = []
        for line in lines:
            offsets.append(self._offset)
            self._offset += len(line) + 1
        batch = LineBatch(self.name, lines, offsets, self._line_no + 1, self.target.url, kind="metrics")
        self._line_no += len(lines)
        return batch

    # -- fetching -------------------------------------------------------------------------------
    async def _fetch(self, conv: Converter) -> SampleStream:
        """One scrape: the page parsed as it arrives (a JSON page, such as a family's default one
        that its data moves from, is flagged and not parsed: ``page.json``)."""
        if self._http is None:
            self._http = HttpClient(tls=self._tls, timeout=self.timeout)
        pages: list[SampleStream] = []

        def sink_for(resp: HttpResponse) -> Sink:
            pages.append(conv.page(resp.content_type))
            return pages[0].feed

        t = self.target
        if t.ssh is None:
            await self._http.stream(t.host, t.port, t.path, sink_for)
            return pages[0]
        port = await self._forward()
        try:
            await self._http.stream("127.0.0.1", port, t.path, sink_for, header_host=f"{t.host}:{t.port}")
        except HttpError as exc:
            conn = self._listener_conn
            if conn is not None and conn.is_closed() and self._shared is not None:
                self._shared.mark_lost(conn)
                await self._drop_listener()
                raise HttpError(f"SSH connection to {t.ssh.host} lost", "closed") from None
            if exc.kind == "closed":
                exc.message += (
                    f" (over ssh: is anything listening on {t.host}:{t.port} as seen from {t.ssh.host}?)"
                )
            raise
        return pages[0]

    async def _forward(self) -> int:
        """The local port forwarded to the target through the host's shared SSH connection."""
        from tui.core.sources.ssh.auth import SshError
        from tui.core.sources.ssh.connect import acquire
        from tui.core.sources.ssh.source import settings_from_options

        t = self.target
        assert t.ssh is not None
        if self._shared is None:
            self._shared = acquire(t.ssh, settings_from_options(self._ssh_options))
        try:
            conn = await self._shared.get()
        except SshError as exc:
            if exc.fatal or (exc.first_fatal and self._shared.connects == 0):
                raise _Fatal(exc.message) from None
            raise HttpError(exc.message, "ssh") from None
        if self._listener is None or self._listener_conn is not conn:
            await self._drop_listener()
            try:
                self._listener = await conn.forward_local_port("127.0.0.1", 0, t.host, t.port)
            except Exception as exc:
                if conn.is_closed():
                    self._shared.mark_lost(conn)
                raise HttpError(f"cannot forward a port over ssh to {t.ssh.host}: {exc}", "ssh") from None
            self._listener_conn = conn
        return self._listener.get_port()

    async def _drop_listener(self) -> None:
        listener, self._listener, self._listener_conn = self._listener, None, None
        if listener is not None:
            listener.close()
            try:
                await wait_for(listener.wait_closed(), 1.0)
            except Exception:
                pass

    async def _close_ssh(self) -> None:
        await self._drop_listener()
        if self._shared is not None:
            from tui.core.sources.ssh.connect import release

            shared, self._shared = self._shared, None
            await release(shared)


_SSH_KEYS = {
    "accept_new_host_key",
    "reconnect_max",
    "ssh_settings",
    "ssh_connect_options",
    "keepalive_interval",
    "keepalive_count_max",
    "connect_timeout",
    "reconnect_initial",
    "status_interval",
    "settle",
}


def open_metrics(spec: SourceSpec, *, follow: bool = True, start: Any = None, **options) -> MetricsSource:
    """The opener registered for the metrics kinds (``start`` does not apply: a scrape is now)."""
    target = parse_metrics_target(spec.target)
    return MetricsSource(
        target,
        spec.name,
        follow=follow,
        interval=float(options.get("scrape_interval") or DEFAULT_INTERVAL),
        timeout=options.get("scrape_timeout"),
        idle_after=options.get("idle_after", 30.0),
        max_scrapes=options.get("max_scrapes"),
        ssh_options={k: v for k, v in options.items() if k in _SSH_KEYS},
    )
