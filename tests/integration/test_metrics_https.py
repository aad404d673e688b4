"""The metrics source over HTTPS: a certificate made by openssl (a subprocess) is verified."""

from __future__ import annotations

import ssl
import subprocess

import pytest
from _ci import missing
from _prom_util import FakeSglang, PromServer
from _sources_util import Collector, metric_records

from tui.core.sources.base import EventKind as K
from tui.core.sources.prom.scraper import MetricsSource, parse_metrics_target


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    r = subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout",
            str(d / "key.pem"),
            "-out",
            str(d / "cert.pem"),
        ],
        capture_output=True,
    )
    if r.returncode != 0:
        missing(f"openssl cannot make a test certificate: {r.stderr[-200:]!r}")
    return d / "cert.pem", d / "key.pem"


async def test_https_verifies_the_certificate(tls_files, monkeypatch):
    cert, key = tls_files
    fake = FakeSglang(dp=1)
    server = PromServer(fake.text).start()
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(cert), str(key))
    server.server.socket = ctx.wrap_socket(server.server.socket, server_side=True)
    try:
        untrusted = MetricsSource(
            parse_metrics_target(f"metrics+https://localhost:{server.port}/metrics"),
            "x",
            interval=0.05,
            idle_after=None,
        )
        async with Collector(untrusted) as c:
            await c.wait_event(K.ERROR)
            assert "TLS certificate not trusted" in c.events[0].message
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # now the system trusts it
        trusted = MetricsSource(
            parse_metrics_target(f"metrics+https://localhost:{server.port}/metrics"),
            "x",
            interval=0.05,
            idle_after=None,
        )
        async with Collector(trusted) as c:
            await c.wait_event(K.CONNECTED)
            fake.decode(0, 3.25, 0.75, 42.125)
            await c.wait_for(lambda c: metric_records(c), what="a record over https")
            assert metric_records(c)[0]["accept_len"] == 3.25
    finally:
        server.stop()
