"""A client of Prometheus's HTTP API (``/api/v1/query``, ``/query_range``, ``/series``, ``/labels``)
on httpx, for the fleet view: any store that speaks the API (Prometheus, Thanos, Mimir,
VictoriaMetrics).

Secrets (a bearer token, a basic-auth password) come from the config file or a file it names,
never from the command line; they are never part of a message, a ``repr`` or a log line. TLS is
verified (system CAs, or ``ca_file``). Every failure is a :class:`PromError` with one plain line and
a ``kind``: ``unreachable``, ``timeout``, ``auth`` (401/403), ``bad_query`` (Prometheus's
``bad_data``: a PromQL error), ``not_prometheus`` (an answer that is not the API's JSON: a wrong
URL), ``server`` (5xx, or an ``error`` status). Prometheus's ``warnings`` (and ``infos``) of a
successful answer — a partial response of Thanos, a query that touched too many series — are kept
on the result, for the caller to show.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from tui.core.model.sanitize import visible

API = "/api/v1/"
# an answer larger than this is refused while it is read (a runaway query: 10^6 series), so the
# memory of one answer is bounded; 10,000 instances at 60 steps answer ~17 MB a query
MAX_BODY = 48 << 20


class PromError(Exception):
    """A failed API call: ``kind`` (see the module text) and one plain line."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class PromAuth:
    """How to authenticate: a bearer token, or a user and password (basic auth); a CA file for a
    private CA. The secrets are left out of ``repr``."""

    bearer_token: str | None = field(default=None, repr=False)
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_file: str | None = None
    verify: bool = True  # False only when the config says so explicitly (insecure_skip_verify)

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.bearer_token}"} if self.bearer_token else {}

    def basic(self) -> httpx.BasicAuth | None:
        if self.username is None:
            return None
        return httpx.BasicAuth(self.username, self.password or "")

    def tls(self) -> ssl.SSLContext | bool:
        if not self.verify:
            return False
        if self.ca_file:
            return ssl.create_default_context(cafile=self.ca_file)
        return True


@dataclass(slots=True)
class Result:
    """A successful answer: ``data`` as Prometheus gives it, and its warnings / infos."""

    data: Any
    warnings: list[str] = field(default_factory=list)

    @property
    def result_type(self) -> str:
        return self.data.get("resultType", "") if isinstance(self.data, dict) else ""

    @property
    def series(self) -> list[dict]:
        """The result list of a vector or matrix answer."""
        if isinstance(self.data, dict) and isinstance(self.data.get("result"), list):
            return self.data["result"]
        return []


def base_url(url: str) -> str:
    """The server's root from what a user writes (``http://prom:9090``, ``prom:9090``,
    ``https://thanos/api/v1/``, ``http://host/prometheus``): scheme, host, port and a path prefix
    without ``/api/v1``. A URL that is none of these is a :class:`PromError`."""
    text = url.strip()
    if "://" not in text:
        text = "http://" + text
    try:
        parts = urlsplit(text)
        host, _ = parts.hostname, parts.port  # a bad port or IPv6 literal raises here
    except ValueError as exc:
        raise PromError("bad_url", f"{visible(url)!s}: not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not host:
        raise PromError("bad_url", f"{visible(url)!s}: not an http(s) URL of a Prometheus server")
    path = parts.path.rstrip("/")
    if path.endswith("/api/v1"):
        path = path[: -len("/api/v1")]
    netloc = parts.netloc.rsplit("@", 1)[-1]  # credentials never ride in the URL
    return f"{parts.scheme}://{netloc}{path}"


class PromAPI:
    """One Prometheus server's HTTP API. ``timeout``: seconds for each call."""

    def __init__(
        self,
        url: str,
        auth: PromAuth | None = None,
        timeout: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
        max_body: int = MAX_BODY,
    ) -> None:
        self.url = base_url(url)
        self.max_body = max_body
        self.shown = visible(self.url)  # for messages (the URL holds no secret)
        self.auth = auth or PromAuth()
        self.timeout = timeout
        self._client = httpx.AsyncClient(
            base_url=self.url,
            headers={"Accept": "application/json", **self.auth.headers()},
            auth=self.auth.basic(),
            verify=self.auth.tls(),
            timeout=httpx.Timeout(timeout),
            transport=transport,
            follow_redirects=True,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> PromAPI:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- the endpoints ------------------------------------------------------------------------
    async def query(self, promql: str, time: float | None = None) -> Result:
        params: dict[str, str] = {"query": promql}
        if time is not None:
            params["time"] = _num(time)
        return await self._call("query", params)

    async def query_range(self, promql: str, start: float, end: float, step: float) -> Result:
        params = {"query": promql, "start": _num(start), "end": _num(end), "step": _num(step)}
        return await self._call("query_range", params)

    async def series(
        self, matchers: list[str], start: float | None = None, end: float | None = None
    ) -> Result:
        params: list[tuple[str, str]] = [("match[]", m) for m in matchers]
        if start is not None:
            params.append(("start", _num(start)))
        if end is not None:
            params.append(("end", _num(end)))
        return await self._call("series", params)

    async def labels(self, matchers: list[str] | None = None) -> Result:
        return await self._call("labels", [("match[]", m) for m in matchers or []])

    async def label_values(self, name: str, matchers: list[str] | None = None) -> Result:
        return await self._call(f"label/{name}/values", [("match[]", m) for m in matchers or []])

    async def server_time(self) -> float:
        """Prometheus's clock (``time()``): windows end at the server's now, not the local one."""
        r = await self.query("time()")
        data = r.data if isinstance(r.data, dict) else {}
        try:
            return float(data["result"][0])
        except (KeyError, IndexError, TypeError, ValueError):
            raise PromError("not_prometheus", f"{self.shown}: time() gave no scalar") from None

    # -- one call -------------------------------------------------------------------------------
    async def _call(self, endpoint: str, params: Any) -> Result:
        where = f"{self.shown}{API}{endpoint}"
        try:
            async with self._client.stream("GET", API + endpoint, params=params) as resp:
                if resp.status_code in (401, 403):
                    what = "authentication failed" if resp.status_code == 401 else "access denied"
                    raise PromError(
                        "auth",
                        f"{where}: {what} (HTTP {resp.status_code}); check the token or user in [fleet] of specwatch.toml",
                    )
                chunks: list[bytes] = []
                size = 0
                async for chunk in resp.aiter_bytes():
                    size += len(chunk)
                    if size > self.max_body:
                        raise PromError(
                            "too_large",
                            f"{where}: answer larger than {self.max_body >> 20} MiB refused (a query over "
                            "too many series? narrow --selector)",
                        )
                    chunks.append(chunk)
                content = b"".join(chunks)
                del chunks
        except httpx.TimeoutException:
            raise PromError("timeout", f"{where}: no answer within {self.timeout:g} s") from None
        except httpx.ConnectError as exc:
            raise PromError("unreachable", f"{self.shown}: cannot connect ({_why(exc)})") from None
        except httpx.HTTPError as exc:
            raise PromError("unreachable", f"{self.shown}: {_why(exc)}") from None
        try:
            body = json.loads(content)
        except ValueError:
            body = None
        del content
        if not isinstance(body, dict) or "status" not in body:
            kind = "server" if resp.status_code >= 500 else "not_prometheus"
            raise PromError(
                kind,
                f"{where}: HTTP {resp.status_code}, not a Prometheus API answer (is the URL a Prometheus server?)",
            )
        if body.get("status") != "success":
            etype = str(body.get("errorType", ""))
            msg = visible(str(body.get("error", "unknown error")))[:300]
            kind = "bad_query" if etype == "bad_data" or resp.status_code in (400, 422) else "server"
            raise PromError(kind, f"{where}: {etype or 'error'}: {msg}")
        warnings = [visible(str(w))[:300] for w in (body.get("warnings") or []) + (body.get("infos") or [])]
        return Result(body.get("data"), warnings)


async def all_of(calls: Iterable[Awaitable[Result]]) -> list[Result]:
    """The answers of several calls run at once; the first failure is raised only after every call
    has ended (none is left running, or half-started, when the caller gives up)."""
    got = await asyncio.gather(*calls, return_exceptions=True)
    for r in got:
        if isinstance(r, BaseException):
            raise r
    return [r for r in got if isinstance(r, Result)]


def _num(x: float) -> str:
    return repr(float(x))


def _why(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return visible(text)[:200]
