"""A minimal HTTP/1.1 GET on asyncio streams, for scraping ``/metrics`` (no extra dependency).

One request per connection (``Connection: close``), the whole exchange under one deadline,
``Content-Length``, chunked and read-to-close bodies, gzip, a size cap. HTTPS uses the default
SSL context: certificates and host names are verified. Every failure is an :class:`HttpError`
with a one-line message.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import zlib
from dataclasses import dataclass, field

from tui.core.sources.aio import wait_for

MAX_BODY = 64 << 20
MAX_HEADER_LINES = 200
ACCEPT = "text/plain;version=0.0.4;q=1,*/*;q=0.1"


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
    body: bytes = b""

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
    """GET ``path`` from ``host:port`` (``tls``: an SSL context for https)."""
    try:
        async with asyncio.timeout(timeout):
            return await _get(host, port, path, tls, server_hostname, header_host, user_agent, max_body)
    except HttpError:
        raise
    except TimeoutError:
        raise HttpError(f"no answer within {timeout:g} s", "timeout") from None
    except ssl.SSLCertVerificationError as exc:
        raise HttpError(f"TLS certificate not trusted: {exc.verify_message or exc.reason}", "tls") from None
    except ssl.SSLError as exc:
        raise HttpError(f"TLS error: {exc.reason or exc}", "tls") from None
    except ConnectionRefusedError:
        raise HttpError(
            "connection refused (is the server running, with metrics on, on that port?)", "refused"
        ) from None
    except socket.gaierror as exc:
        raise HttpError(f"unknown host name {host!r} ({exc.strerror or exc})", "dns") from None
    except asyncio.IncompleteReadError:
        raise HttpError("the connection closed in the middle of the response", "closed") from None
    except (ConnectionResetError, BrokenPipeError):
        raise HttpError("the connection was reset", "closed") from None
    except OSError as exc:
        raise HttpError(f"cannot connect: {exc.strerror or exc}", "oserror") from None


async def _get(
    host: str,
    port: int,
    path: str,
    tls: ssl.SSLContext | None,
    server_hostname: str | None,
    header_host: str | None,
    user_agent: str,
    max_body: int,
) -> HttpResponse:
    if tls is not None:
        conn = asyncio.open_connection(
            host, port, limit=1 << 20, ssl=tls, server_hostname=server_hostname or host
        )
    else:
        conn = asyncio.open_connection(host, port, limit=1 << 20)
    reader, writer = await conn
    try:
        req = (
            f"GET {path} HTTP/1.1\r\nHost: {header_host or host_header(host, port, 443 if tls else 80)}\r\n"
            f"User-Agent: {user_agent}\r\nAccept: {ACCEPT}\r\nAccept-Encoding: gzip\r\n"
            "Connection: close\r\n\r\n"
        )
        writer.write(req.encode("latin-1"))
        await writer.drain()
        status_line = await reader.readline()
        if not status_line:
            raise HttpError("the connection closed before any response", "closed")
        parts = status_line.decode("latin-1").rstrip("\r\n").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
            raise HttpError(f"not an HTTP response: {status_line[:60]!r}", "protocol")
        status, reason = int(parts[1]), (parts[2] if len(parts) > 2 else "")
        headers = await _headers(reader)
        body = await _body(reader, headers, max_body)
        enc = headers.get("content-encoding", "").lower()
        if enc == "gzip":
            body = _gunzip(body, max_body)
        elif enc not in ("", "identity"):
            raise HttpError(f"unsupported content encoding {enc!r}", "protocol")
        resp = HttpResponse(status, reason, headers, body)
        if status != 200:
            loc = f" (to {headers['location']})" if "location" in headers and 300 <= status < 400 else ""
            raise HttpError(f"HTTP {status} {reason}{loc}".rstrip(), "status", status)
        return resp
    finally:
        writer.close()
        try:
            await wait_for(writer.wait_closed(), 1.0)
        except (TimeoutError, OSError, ssl.SSLError):
            pass


async def _headers(reader: asyncio.StreamReader) -> dict[str, str]:
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADER_LINES):
        line = await reader.readline()
        if not line:
            raise HttpError("the connection closed in the middle of the headers", "closed")
        text = line.decode("latin-1").rstrip("\r\n")
        if not text:
            return headers
        name, sep, value = text.partition(":")
        if sep:
            name = name.strip().lower()
            headers[name] = f"{headers[name]}, {value.strip()}" if name in headers else value.strip()
    raise HttpError("too many header lines", "protocol")


async def _body(reader: asyncio.StreamReader, headers: dict[str, str], max_body: int) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        chunks: list[bytes] = []
        total = 0
        while True:
            size_line = (await reader.readline()).split(b";", 1)[0].strip()
            try:
                size = int(size_line, 16)
            except ValueError:
                raise HttpError("bad chunked encoding", "protocol") from None
            if size == 0:
                while (await reader.readline()).strip():  # trailers
                    pass
                return b"".join(chunks)
            total += size
            if total > max_body:
                raise HttpError(f"response larger than {max_body >> 20} MiB", "protocol")
            chunks.append(await reader.readexactly(size))
            await reader.readline()
    length = headers.get("content-length")
    if length is not None:
        try:
            n = int(length)
        except ValueError:
            raise HttpError(f"bad Content-Length {length!r}", "protocol") from None
        if n > max_body:
            raise HttpError(f"response larger than {max_body >> 20} MiB", "protocol")
        return await reader.readexactly(n)
    buf, total = [], 0
    while data := await reader.read(1 << 16):  # no length given: the body ends with the connection
        total += len(data)
        if total > max_body:
            raise HttpError(f"response larger than {max_body >> 20} MiB", "protocol")
        buf.append(data)
    return b"".join(buf)


def _gunzip(body: bytes, max_body: int) -> bytes:
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(body, max_body + 1)
    except zlib.error as exc:
        raise HttpError(f"bad gzip body ({exc})", "protocol") from None
    if len(out) > max_body:
        raise HttpError(f"response larger than {max_body >> 20} MiB once unpacked", "protocol")
    return out


__all__ = ["HttpError", "HttpResponse", "http_get"]
