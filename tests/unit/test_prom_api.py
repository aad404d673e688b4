"""The Prometheus API client (httpx) without a server: credentials sent as configured and never
shown, each failure one plain line of its kind, warnings kept (httpx.MockTransport)."""

from __future__ import annotations

import asyncio
import base64
import json

import httpx
import pytest

from tui.core.sources.prom.api import PromAPI, PromAuth, PromError, base_url

SECRET = "s3cr3t-token-\x1b]0;pwned\x07"


def run(coro):
    return asyncio.run(coro)


def api_with(handler, auth: PromAuth | None = None) -> PromAPI:
    return PromAPI("http://prom.test:9090", auth, timeout=2, transport=httpx.MockTransport(handler))


def ok(data, **more) -> httpx.Response:
    return httpx.Response(200, text=json.dumps({"status": "success", "data": data, **more}))


def test_bearer_token_and_basic_auth_are_sent_and_never_shown():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization"))
        return httpx.Response(401, text="no")

    for auth, want in (
        (PromAuth(bearer_token=SECRET), f"Bearer {SECRET}"),
        (
            PromAuth(username="u", password=SECRET),
            "Basic " + base64.b64encode(f"u:{SECRET}".encode()).decode(),
        ),
    ):
        api = api_with(handler, auth)
        with pytest.raises(PromError) as exc:
            run(api.query("up"))
        run(api.aclose())
        assert exc.value.kind == "auth" and "authentication failed (HTTP 401)" in str(exc.value)
        assert SECRET not in str(exc.value) and "s3cr3t" not in repr(auth)
        assert seen[-1] == want


@pytest.mark.parametrize(
    ("response", "kind", "words"),
    [
        (httpx.Response(403, text="no"), "auth", "access denied"),
        (httpx.Response(200, text="<html>grafana</html>"), "not_prometheus", "not a Prometheus API answer"),
        (httpx.Response(502, text="bad gateway"), "server", "HTTP 502"),
        (
            httpx.Response(
                400, text=json.dumps({"status": "error", "errorType": "bad_data", "error": "parse error"})
            ),
            "bad_query",
            "bad_data: parse error",
        ),
        (
            httpx.Response(
                422,
                text=json.dumps({"status": "error", "errorType": "execution", "error": "\x1b[31mred\x1b[0m"}),
            ),
            "bad_query",
            "execution:",
        ),
    ],
)
def test_each_failure_is_one_plain_line(response, kind, words):
    api = api_with(lambda request: response)
    with pytest.raises(PromError) as exc:
        run(api.query_range("up", 0, 60, 15))
    run(api.aclose())
    msg = str(exc.value)
    assert exc.value.kind == kind and words in msg and "\n" not in msg and "\x1b" not in msg


def test_unreachable_and_timeout():
    def refuse(request):
        raise httpx.ConnectError("connection refused")

    def slow(request):
        raise httpx.ReadTimeout("read timed out")

    for handler, kind in ((refuse, "unreachable"), (slow, "timeout")):
        api = api_with(handler)
        with pytest.raises(PromError) as exc:
            run(api.query("up"))
        run(api.aclose())
        assert exc.value.kind == kind


def test_warnings_of_a_partial_answer_are_kept():
    api = api_with(
        lambda r: ok({"resultType": "vector", "result": []}, warnings=["partial response \x1b[2J"])
    )
    got = run(api.query("up"))
    run(api.aclose())
    assert got.warnings == ["partial response ␛[2J"] or got.warnings[0].startswith("partial response")
    assert "\x1b" not in got.warnings[0]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("prom:9090", "http://prom:9090"),
        ("https://thanos.example/api/v1/", "https://thanos.example"),
        ("http://host/prometheus", "http://host/prometheus"),
        ("http://user:pw@prom:9090", "http://prom:9090"),
    ],
)
def test_base_url(text, want):
    assert base_url(text) == want


def test_a_bad_url():
    with pytest.raises(PromError):
        base_url("ftp://x")


def test_a_million_series_answer_is_refused_in_bounded_memory():
    """A runaway answer (10^6 series, ~110 MB) is read only up to the limit and refused in one
    line: the memory it took stays near the limit, not the answer's size (or its parse's)."""
    import tracemalloc

    async def body():
        yield b'{"status":"success","data":{"resultType":"vector","result":['
        row = b'{"metric":{"__name__":"vllm:spec_decode_num_drafts_total","instance":"h%07d:8000"},"value":[1,"1"]},'
        for start in range(0, 1_000_000, 10_000):
            yield b"".join(row % i for i in range(start, start + 10_000))
        yield b"{}]}}"

    api = PromAPI(
        "http://prom.test:9090",
        timeout=30,
        transport=httpx.MockTransport(lambda r: httpx.Response(200, content=body())),
        max_body=8 << 20,
    )
    tracemalloc.start()
    try:
        with pytest.raises(PromError) as exc:
            run(api.query("vllm:spec_decode_num_drafts_total"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        run(api.aclose())
    msg = str(exc.value)
    assert exc.value.kind == "too_large" and "answer larger than 8 MiB refused" in msg and "\n" not in msg
    assert peak < 40 << 20, peak


def test_a_path_prefix_is_kept_in_every_call():
    paths = []

    def handler(request: httpx.Request) -> httpx.Response:
        paths.append(request.url.path)
        return ok({"resultType": "scalar", "result": [1.0, "1.0"]})

    api = PromAPI("http://prom.test:9090/prom/", transport=httpx.MockTransport(handler))
    assert run(api.server_time()) == 1.0
    run(api.aclose())
    assert paths == ["/prom/api/v1/query"]


@pytest.mark.parametrize("text", ["http://[::1", "http://prom:99999", "http://[::1]:x/"])
def test_a_malformed_url_is_one_line(text):
    with pytest.raises(PromError) as exc:
        base_url(text)
    assert exc.value.kind == "bad_url" and "\n" not in str(exc.value)
