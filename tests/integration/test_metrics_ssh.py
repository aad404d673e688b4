"""``metrics+ssh://HOST/PORT``: the port reached through asyncssh local port forwarding over the
host's shared connection (an in-process asyncssh server on 127.0.0.1 that allows forwarding)."""

from __future__ import annotations

import json

import pytest
from _prom_util import FakeVllm, PromServer
from _sources_util import Collector
from _ssh_util import ExecServer, free_port

from tui.core.sources.base import EventKind as K
from tui.core.sources.base import LineBatch
from tui.core.sources.spec import SshTarget, open_source, parse_source_spec
from tui.core.sources.ssh import connect as ssh_connect


def records(c: Collector) -> list[dict]:
    out = []
    for b in c.items:
        if isinstance(b, LineBatch):
            out += [d for d in map(json.loads, b.lines) if "marker" not in d]
    return out


async def test_scrape_through_the_shared_ssh_connection(tmp_path):
    sshd = ExecServer(tmp_path, forwarding=True)
    await sshd.start()
    fake = FakeVllm(engines=1, k=2)
    web = PromServer(fake.text).start()
    settings = sshd.settings()
    log_source = ssh_connect.acquire(SshTarget("127.0.0.1", "/var/log/x.log", None, sshd.port), settings)
    try:
        await log_source.get()  # the connection a log source on that host already has
        spec = parse_source_spec(f"gpu=metrics+ssh://127.0.0.1:{sshd.port}/{web.port}")
        src = open_source(spec, scrape_interval=0.05, idle_after=None, ssh_settings=settings)
        async with Collector(src) as c:
            await c.wait_event(K.CONNECTED)
            assert "via ssh 127.0.0.1" in c.events[0].message
            fake.step(0, 8, [6, 2])
            await c.wait_for(lambda c: records(c), what="a record over ssh")
            assert records(c)[0]["accept_len"] == pytest.approx(2.0)
            assert sshd.connections == 1  # shared, not a second connection
            # the SSH host goes away, then comes back: events, then records again
            port = sshd.port
            await sshd.stop()
            await c.wait_event(K.RECONNECTING)
            await sshd.start(port)
            await c.wait_event(K.CONNECTED, 2)
            fake.step(0, 4, [4, 4])
            await c.wait_for(lambda c: len(records(c)) >= 2, what="a record after the reconnect")
            assert records(c)[-1]["accept_len"] == pytest.approx(3.0)
            assert not c.done
    finally:
        await ssh_connect.release(log_source)
        web.stop()
        await sshd.stop()


async def test_nothing_listening_on_the_remote_port(tmp_path):
    sshd = ExecServer(tmp_path, forwarding=True)
    await sshd.start()
    try:
        spec = parse_source_spec(f"metrics+ssh://127.0.0.1:{sshd.port}/{free_port()}")
        src = open_source(spec, scrape_interval=0.05, idle_after=None, ssh_settings=sshd.settings())
        async with Collector(src) as c:
            await c.wait_event(K.ERROR)
            msg = [e for e in c.events if e.kind == K.ERROR][0].message
            assert "over ssh" in msg or "forward" in msg, msg
            assert not c.done
        assert ssh_connect.pool_size() == 0  # released on close
    finally:
        await sshd.stop()


async def test_unknown_host_key_is_fatal(tmp_path):
    sshd = ExecServer(tmp_path, forwarding=True)
    await sshd.start()
    try:
        settings = sshd.settings()
        (tmp_path / "known_hosts").write_text("")
        src = open_source(
            parse_source_spec(f"metrics+ssh://127.0.0.1:{sshd.port}/8000"),
            scrape_interval=0.05,
            idle_after=None,
            ssh_settings=settings,
        )
        async with Collector(src) as c:
            await c.wait_for(lambda c: c.done, what="the end")
            ev = c.events[-1]
            assert ev.kind == K.ERROR and ev.data["fatal"] and "unknown host" in ev.message
    finally:
        await sshd.stop()
