"""HTTP GET for scraping ``/metrics``, on httpx (a kept library, not a hand-written client).

:class:`HttpClient` holds one ``httpx.AsyncClient`` for a source's life (one request per
connection, ``Connection: close``: a server that went away, or a restarted one, is seen at the next
scrape). Each exchange runs under one deadline (``timeout`` for the whole of it,
however slowly the bytes come), bodies are bounded (:data:`MAX_BODY`, counted once unpacked:
gzip is decoded by httpx), redirects are not followed (a redirect is an error naming where to),
HTTPS uses the SSL context given (the scraper's default one: certificates and host names are
verified). Every failure is an :class:`HttpError` with a one-line message and a ``kind``.

:meth:`HttpClient.stream` hands the body to a sink chunk by chunk, as it arrives, so that a page
of millions of series is parsed without being held (:mod:`tui.core.sources.prom.exposition`);
:meth:`HttpClient.get` and :func:`http_get` return it whole.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

MAX_BODY = 256 << 20  # bytes read from one response, unpacked (a stream is parsed, not held)
ACCEPT = "text/plain;version=0.0.4;q=1,*/*;q=0.1"
_DECODED = ("", "identity", "gzip", "x-gzip", "deflate")  # what httpx unpacks itself

Sink = Callable[[bytes], None]


class HttpError(Exception):
    """``kind``: refused, dns, timeout, tls, closed, status, protocol, oserror."""

    def __init__(self, message: str, kind: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status = status


@dataclass(slots=True)
class HttpResponse:
    status: int
    reason: str
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names (repeated ones joined by ", ")
    body: bytes = b""  # empty for a streamed response (its body went to the sink)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    def text(self) -> str:
        ct = self.content_type.lower()
        charset = "utf-8"
        if "charset=" in ct:
            charset = ct.split("charset=", 1)[1].split(";")[0].strip() or "utf-8"
        try:
            return self.body.decode(charset, "replace")
        except LookupError:
            return self.body.decode("utf-8", "replace")


def host_header(host: str, port: int, default_port: int) -> str:
    h = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return h if port == default_port else f"{h}:{port}"


class HttpClient:
    """GETs for one source (``tls``: the SSL context for https; None for plain http). There is no
    authentication to send: a metrics source's address takes none (the fleet's Prometheus API
    client, :mod:`tui.core.sources.prom.api`, has its own)."""

    def __init__(
        self,
        *,
        tls: ssl.SSLContext | None = None,
        timeout: float = 10.0,
        user_agent: str = "specwatch",
        max_body: int = MAX_BODY,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.tls = tls
        self.timeout = timeout
        self.max_body = max_body
        # plain http speaks no TLS: False only spares httpx loading the CAs for a context never used
        self._client = httpx.AsyncClient(
            verify=tls if tls is not None else False,
            timeout=httpx.Timeout(timeout),
            # one request per connection, as before: a server that went away is seen at once
            headers={
                "User-Agent": user_agent,
                "Accept": ACCEPT,
                "Accept-Encoding": "gzip",
                "Connection": "close",
            },
            follow_redirects=False,
            trust_env=False,  # a scrape goes where it is told, not through a proxy of the environment
            transport=transport,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def get(
        self,
        host: str,
        port: int,
        path: str,
        *,
        header_host: str | None = None,
        server_hostname: str | None = None,
    ) -> HttpResponse:
        """The whole response (``max_body`` at most)."""
        chunks: list[bytes] = []
        resp = await self.stream(
            host,
            port,
            path,
            lambda _: chunks.append,
            header_host=header_host,
            server_hostname=server_hostname,
        )
        resp.body = b"".join(chunks)
        return resp

    async def stream(
        self,
        host: str,
        port: int,
        path: str,
        sink_for: Callable[[HttpResponse], Sink],
        *,
        header_host: str | None = None,
        server_hostname: str | None = None,
    ) -> HttpResponse:
        """GET ``path``: once the headers of a 200 answer are in, ``sink_for(response)`` gives the
        function each unpacked chunk of the body goes to."""
        scheme = "https" if self.tls is not None else "http"
        h = f"[{host}]" if ":" in host and not host.startswith("[") else host
        headers = {"Host": header_host} if header_host else {}
        extensions = {"sni_hostname": server_hostname} if server_hostname else None
        try:
            async with asyncio.timeout(self.timeout):
                return await self._exchange(f"{scheme}://{h}:{port}{path}", headers, extensions, sink_for)
        except HttpError:
            raise
        except TimeoutError:
            raise HttpError(f"no answer within {self.timeout:g} s", "timeout") from None
        except httpx.TimeoutException:
            raise HttpError(f"no answer within {self.timeout:g} s", "timeout") from None
        except (httpx.HTTPError, OSError, ssl.SSLError) as exc:
            raise _error(exc, host) from None

    async def _exchange(
        self,
        url: str,
        headers: dict[str, str],
        extensions: dict | None,
        sink_for: Callable[[HttpResponse], Sink],
    ) -> HttpResponse:
        async with self._client.stream("GET", url, headers=headers, extensions=extensions) as r:
            resp = HttpResponse(
                r.status_code,
                r.reason_phrase,
                {k.lower(): ", ".join(r.headers.get_list(k)) for k in r.headers},
            )
            if r.status_code != 200:
                where = resp.headers.get("location")
                loc = f" (to {where})" if where and 300 <= r.status_code < 400 else ""
                raise HttpError(
                    f"HTTP {r.status_code} {r.reason_phrase}{loc}".rstrip(), "status", r.status_code
                )
            enc = resp.headers.get("content-encoding", "").lower()
            if enc not in _DECODED:
                raise HttpError(f"unsupported content encoding {enc!r}", "protocol")
            length = resp.headers.get("content-length")
            if length is not None and length.isdigit() and int(length) > self.max_body:
                raise HttpError(f"response larger than {self.max_body >> 20} MiB", "protocol")
            sink = sink_for(resp)
            total = 0
            async for chunk in r.aiter_bytes():
                total += len(chunk)
                if total > self.max_body:
                    packed = " once unpacked" if enc not in ("", "identity") else ""
                    raise HttpError(f"response larger than {self.max_body >> 20} MiB{packed}", "protocol")
                sink(chunk)
            return resp


def _causes(exc: BaseException):
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        yield cur
        cur = cur.__cause__ or cur.__context__


def _error(exc: BaseException, host: str) -> HttpError:
    """The one-line error of a failed exchange (httpx wraps the socket's and TLS's own errors)."""
    for cause in _causes(exc):
        if isinstance(cause, ssl.SSLCertVerificationError):
            return HttpError(f"TLS certificate not trusted: {cause.verify_message or cause.reason}", "tls")
        if isinstance(cause, ssl.SSLError):
            return HttpError(f"TLS error: {cause.reason or cause}", "tls")
        if isinstance(cause, ConnectionRefusedError):
            return HttpError(
                "connection refused (is the server running, with metrics on, on that port?)", "refused"
            )
        if isinstance(cause, socket.gaierror):
            return HttpError(f"unknown host name {host!r} ({cause.strerror or cause})", "dns")
        if isinstance(cause, (ConnectionResetError, BrokenPipeError)):
            return HttpError("the connection was reset", "closed")
    text = str(exc)
    if isinstance(exc, httpx.RemoteProtocolError):
        if "without sending a response" in text or "Server disconnected" in text:
            return HttpError("the connection closed before any response", "closed")
        if "incomplete" in text.lower() or "complete message body" in text:
            return HttpError("the connection closed in the middle of the response", "closed")
        return HttpError(f"not an HTTP response ({text[:80]})", "protocol")
    if isinstance(exc, httpx.DecodingError):
        return HttpError(f"bad gzip body ({text[:80]})", "protocol")
    if isinstance(exc, OSError):
        return HttpError(f"cannot connect: {exc.strerror or exc}", "oserror")
    return HttpError(f"cannot connect: {text[:120] or type(exc).__name__}", "oserror")


async def http_get(
    host: str,
    port: int,
    path: str,
    *,
    tls: ssl.SSLContext | None = None,
    server_hostname: str | None = None,
    timeout: float = 10.0,
    header_host: str | None = None,
    user_agent: str = "specwatch",
    max_body: int = MAX_BODY,
) -> HttpResponse:
    """One GET of ``path`` from ``host:port`` (``tls``: an SSL context for https), the body whole."""
    client = HttpClient(tls=tls, timeout=timeout, user_agent=user_agent, max_body=max_body)
    try:
        return await client.get(host, port, path, header_host=header_host, server_hostname=server_hostname)
    finally:
        await client.aclose()


__all__ = ["HttpClient", "HttpError", "HttpResponse", "http_get"]
