"""``specwatch summary --json`` end to end against TensorRT-LLM's, llama.cpp's and SGLang's new
/metrics formats, each over HTTP (the CLI as a subprocess; the servers are the held-out fakes of
tests/_prom_util.py, checked on their own in tests/unit/test_prom_formats.py)."""

from __future__ import annotations

import json

import pytest
from _cli_util import run_cli
from _prom_util import (
    FakeAdaptiveSglang,
    FakeLlamacpp,
    FakeTrtllm,
    PromServer,
    QuietHandler,
    serve,
)


# -- specwatch summary --json, end to end over HTTP -----------------------------------------------
def summary_json(url: str, whole: bool = False) -> dict:
    r = run_cli("summary", "--json", "--duration", "0.3", "--scrape-interval", "0.1", url)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout) if whole else json.loads(r.stdout)["sources"][0]


def test_summary_json_trtllm_endpoint():
    srv = FakeTrtllm(k=4)

    def body() -> str:  # each scrape: 2 requests of 5 steps finish, 13 drafts accepted
        rid = len(srv.requests) + srv.fin_steps
        srv.iterate({rid: 4, rid + 1: 1})
        for a in ([3, 0], [2, 1], [1, 0], [0, 1]):
            srv.iterate({rid: a[0], rid + 1: a[1]})
        srv.finish(rid)
        srv.finish(rid + 1)
        return srv.text()

    server = PromServer(body, path="/prometheus/metrics").start()
    try:
        src = summary_json(f"trt=metrics+{server.url}")
    finally:
        server.stop()
    assert src["family"] == "trtllm" and src["records"] == 3
    assert src["accept_len"]["weighted_mean"] == pytest.approx(1 + 13 / 10)
    assert src["accept_rate"]["weighted_mean"] == pytest.approx(13 / 40)
    seg = src["segments"][-1]
    assert seg["config"]["num_speculative_tokens"] == 4 and seg["config"]["algorithm"] == "Eagle3"
    assert src["metrics"]["lifetime"]["all"]["accept_len"] == pytest.approx(1 + 13 / 10)


def test_summary_json_llamacpp_endpoint():
    srv = FakeLlamacpp()

    def body() -> str:
        srv.request([(3, 3), (3, 1), (2, 0), (3, 2)])  # 6 accepted in 4 steps
        return srv.text()

    server = PromServer(body).start()
    try:
        src = summary_json(f"metrics+{server.url}")
    finally:
        server.stop()
    assert src["family"] == "llamacpp" and src["records"] == 3
    assert src["accept_len"]["weighted_mean"] == pytest.approx(2.5)
    assert src["accept_rate"]["weighted_mean"] == pytest.approx(6 / 11)
    assert src["per_position"] == pytest.approx([3 / 4, 2 / 4, 1 / 4])
    # no k: llama.cpp drafts 2 or 3 tokens a step here, so no normalised rate from a made-up D
    assert src["segments"][-1]["rate_definition"]["drafts_per_step"] is None


def test_summary_json_sglang_steps_gauge():
    srv = FakeAdaptiveSglang(dp=1)
    plan = iter([(3, 50, 40), (3, 60, 40), (7, 120, 40), (7, 140, 40)] + [(7, 100, 40)] * 20)

    def body() -> str:
        steps, acc, verify = next(plan)
        srv.adaptive_decode(steps, acc, verify, 100.0 + acc)
        return srv.text()

    server = PromServer(body).start()
    try:
        src = summary_json(f"metrics+{server.url}")
    finally:
        server.stop()
    assert src["family"] == "sglang" and src["records"] == 3
    segs = src["segments"]
    assert [(s["config"]["num_steps"], s["records"]) for s in segs] == [(3, 1), (7, 2)]
    assert segs[1]["accept_len"]["mean"] == pytest.approx(1 + 130 / 40)
    assert segs[1]["accept_rate_normalized"]["mean"] == pytest.approx((130 / 40) / 7)


class TrtllmServe:
    """trtllm-serve's two endpoints: ``GET /metrics`` = the JSON iteration-stats list (drained on
    read), ``GET /prometheus/metrics`` = the Prometheus text."""

    def __init__(self, prom_body) -> None:
        self.paths: list[str] = []
        outer = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                outer.paths.append(self.path)
                if self.path == "/metrics":
                    body, ctype = b'[{"iter": 12, "numActiveRequests": 2}]', "application/json"
                elif self.path == "/prometheus/metrics":
                    body, ctype = prom_body().encode(), "text/plain; version=0.0.4; charset=utf-8"
                else:
                    body, ctype = b"not found", "text/plain"
                self.send_response(200 if ctype != "text/plain" else 404)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = serve(Handler)
        self.port = self.server.server_address[1]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_summary_without_a_path_finds_trtllm_prometheus_metrics():
    srv = FakeTrtllm(k=2)

    def body() -> str:
        srv.iterate({1: 2, 2: 1})
        return srv.text()

    server = TrtllmServe(body)
    try:
        out = summary_json(f"metrics+http://127.0.0.1:{server.port}", whole=True)
    finally:
        server.stop()
    src = out["sources"][0]
    assert server.paths[0] == "/metrics" and set(server.paths[1:]) == {"/prometheus/metrics"}
    assert src["family"] == "trtllm" and src["records"] == 3
    assert src["accept_len"]["weighted_mean"] == pytest.approx(2.5)
    assert src["metrics"]["url"].endswith(":%d/prometheus/metrics" % server.port)
    assert any("/metrics answered JSON" in e for e in src["metrics"]["events"])
