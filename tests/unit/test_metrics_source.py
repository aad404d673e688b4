"""The metrics source against local HTTP servers (real sockets on 127.0.0.1): records, a server
that goes away and comes back restarted, HTTP variants, HTTPS, idle, and the spec syntax."""

from __future__ import annotations

import pytest
from _prom_util import FakeSglang, FakeVllm, PromServer
from _sources_util import Collector, metric_records

from tui.core.pipeline.follow import Followed
from tui.core.sources.base import EventKind as K
from tui.core.sources.kinds import METRICS, kind_of
from tui.core.sources.prom.http import HttpError, http_get
from tui.core.sources.prom.scraper import MetricsSource, parse_metrics_target
from tui.core.sources.spec import SourceSpecError, open_source, parse_source_spec

FAST = dict(scrape_interval=0.05, scrape_timeout=1.0, idle_after=None)


def test_spec_syntax():
    t = parse_metrics_target("metrics+http://gpu1:8000")
    assert (t.scheme, t.host, t.port, t.path, t.ssh) == ("http", "gpu1", 8000, "/metrics", None)
    t = parse_metrics_target("metrics+https://vllm.example.org/stats/metrics?x=1")
    assert (t.scheme, t.port, t.path) == ("https", 443, "/stats/metrics?x=1")
    t = parse_metrics_target("metrics+ssh://me@gpu1:2222/8000")
    assert (t.host, t.port, t.path, t.ssh.host, t.ssh.user, t.ssh.port) == (
        "127.0.0.1",
        8000,
        "/metrics",
        "gpu1",
        "me",
        2222,
    )
    t = parse_metrics_target("metrics+ssh://gpu1/10.0.0.5:9000/m")
    assert (t.host, t.port, t.path) == ("10.0.0.5", 9000, "/m") and t.where.endswith("via ssh gpu1")
    for bad in (
        "metrics+ssh://gpu1/",
        "metrics+ssh://gpu1/x",
        "metrics+http://u:p@h/metrics",
        "metrics+http:///m",
    ):
        with pytest.raises(SourceSpecError):
            parse_metrics_target(bad)
    spec = parse_source_spec("gpu=metrics+http://127.0.0.1:8000/metrics")
    assert (spec.kind, spec.label, spec.name) == ("metrics+http", "gpu", "gpu")
    assert kind_of(spec) is METRICS and kind_of(parse_source_spec("a=metrics+ssh://h/1")) is METRICS
    assert kind_of(parse_source_spec("/var/log/x.log")) is not METRICS
    with pytest.raises(SourceSpecError, match="give the port"):
        parse_source_spec("metrics+ssh://gpu1/metrics")  # said when read, before anything opens


async def test_scrapes_records_and_restart_after_the_server_went_away():
    fake = FakeVllm(engines=2, k=3)
    server = PromServer(fake.text).start()
    src = open_source(parse_source_spec(f"v=metrics+{server.url}"), **FAST)
    st = Followed("v")
    try:
        async with Collector(src) as c:
            await c.wait_event(K.CONNECTED)
            fake.step(0, 10, [8, 6, 4])
            await c.wait_for(lambda c: metric_records(c), what="a record")
            rec = metric_records(c)[0]
            assert rec["rank"] == "engine 0" and rec["accept_len"] == pytest.approx(2.8)
            port = server.port
            server.stop()  # the server goes away: events, no crash
            await c.wait_event(K.ERROR)
            await c.wait_event(K.RECONNECTING, 2)
            err = [e for e in c.events if e.kind == K.ERROR][0]
            # refused, or reset when a kept-alive connection was open as the server went
            said = ("connection refused", "the connection was reset")
            assert any(w in err.message for w in said) and err.data["fatal"] is False, err.message
            fake.restart()
            fake.step(1, 5, [5, 5, 5])
            server = PromServer(fake.text, port=port).start()  # back, restarted
            await c.wait_event(K.CONNECTED, 2)
            await c.wait_for(lambda c: len(metric_records(c)) >= 2, what="the record after the restart")
            assert not c.done and c.error is None
            for b in c.items:
                st.feed(b)
            assert [s.reason for s in st.stats.segments] == ["metrics_start", "counter_reset"]
            assert st.stats.current.ranks["engine 1"].accept_len.last == pytest.approx(4.0)
            assert c.events[-1].data.get("reconnect") is True or any(
                e.data.get("reconnect") for e in c.events
            )
    finally:
        server.stop()


@pytest.mark.parametrize("mode", ["chunked", "gzip", "close"])
async def test_http_bodies(mode):
    fake = FakeSglang(dp=1)
    fake.decode(0, 2.5, 0.5, 100.5)
    server = PromServer(fake.text, mode=mode).start()
    try:
        resp = await http_get("127.0.0.1", server.port, "/metrics", timeout=2)
        assert resp.text() == fake.text()
    finally:
        server.stop()


async def test_http_errors_are_one_line_events():
    server = PromServer(lambda: "", mode=503).start()
    try:
        with pytest.raises(HttpError, match="HTTP 503"):
            await http_get("127.0.0.1", server.port, "/metrics", timeout=2)
        src = MetricsSource(
            parse_metrics_target(f"metrics+http://127.0.0.1:{server.port}/nothing"),
            "x",
            interval=0.05,
            idle_after=None,
        )
        async with Collector(src) as c:
            await c.wait_event(K.RECONNECTING, 3)
            assert [e.message for e in c.events if e.kind == K.ERROR] == [
                f"http://127.0.0.1:{server.port}/nothing: HTTP 404 Not Found (retrying)"
            ]  # said once
    finally:
        server.stop()


async def test_not_following_reads_one_window_then_ends_and_fails_when_nobody_answers():
    fake = FakeVllm(engines=1, k=2)
    server = PromServer(fake.text).start()
    try:
        src = MetricsSource(parse_metrics_target("metrics+" + server.url), "x", follow=False, interval=0.1)
        async with Collector(src) as c:
            await c.wait_event(K.EOF)
            assert server.requests == 2 and c.kinds[-1] == K.EOF
        port = server.port
    finally:
        server.stop()
    src = MetricsSource(
        parse_metrics_target(f"metrics+http://127.0.0.1:{port}/metrics"), "x", follow=False, interval=0.1
    )
    async with Collector(src) as c:
        await c.wait_for(lambda c: c.done, what="the end")
        assert c.events[-1].kind == K.ERROR and c.events[-1].data["fatal"] and src.error


async def test_idle_when_the_counters_do_not_move():
    fake = FakeVllm(engines=1, k=2)
    server = PromServer(fake.text).start()
    try:
        src = MetricsSource(parse_metrics_target("metrics+" + server.url), "x", interval=0.05, idle_after=0.2)
        async with Collector(src) as c:
            await c.wait_event(K.IDLE)
            assert "no decoding" in [e for e in c.events if e.kind == K.IDLE][0].message
            assert metric_records(c) == []
            fake.step(0, 4, [2, 1])
            await c.wait_for(lambda c: metric_records(c), what="a record")
    finally:
        server.stop()


async def test_garbage_is_an_error_event_not_a_crash():
    server = PromServer(lambda: "<html>this is not prometheus{</html>\n").start()
    try:
        src = MetricsSource(
            parse_metrics_target("metrics+" + server.url), "x", interval=0.05, idle_after=None
        )
        async with Collector(src) as c:
            await c.wait_event(K.RECONNECTING, 2)
            assert "not Prometheus text" in [e for e in c.events if e.kind == K.ERROR][0].message
            await c.wait_event(K.RECONNECTING, 4)  # more garbage answers later
            assert not c.done
    finally:
        server.stop()
