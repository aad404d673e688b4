"""``specwatch fleet`` with a bearer token, live: a real Prometheus behind a reverse proxy that
requires ``Authorization: Bearer <token>`` (Prometheus's own web config knows basic auth only;
the proxies in front of a Prometheus — an oauth2 or a cloud gateway — check a token this way).
The token comes from ``[fleet] bearer_token_file`` of specwatch.toml, never from the command line,
is sent in the header only (never in a URL), and is never printed — neither by ``fleet --json`` nor
by the error of a wrong token; the instance's own series (the screen's Enter) is read through the
same proxy with the same token."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from _cli_util import run_cli
from _prom_util import FakeVllm, PromServer
from _prometheus_util import history_of, running_prometheus
from _wait import wait_until

from tui.core.sources.prom.api import PromAuth

TOKEN = "s3cr3t-t0ken-\x1b[31m-9f2"  # an escape sequence in it: it is never printed at all
CLEAN = "s3cr3t-t0ken-9f2"


class BearerProxy:
    """Forwards GETs to ``upstream`` when the request carries ``Authorization: Bearer <token>``,
    else answers 401; remembers every request line and Authorization header it saw."""

    def __init__(self, upstream: str, token: str) -> None:
        self.upstream, self.token = upstream, token
        self.seen: list[tuple[str, str | None]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                auth = self.headers.get("Authorization")
                proxy.seen.append((self.path, auth))
                if auth != f"Bearer {proxy.token}":
                    self._send(401, b"Unauthorized\n", "text/plain")
                    return
                try:
                    with urllib.request.urlopen(proxy.upstream + self.path, timeout=30) as r:
                        self._send(r.status, r.read(), r.headers.get("Content-Type", "application/json"))
                except urllib.error.HTTPError as exc:
                    self._send(exc.code, exc.read(), "application/json")

            def _send(self, code: int, body: bytes, ctype: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_bearer_token_from_the_config_live(tmp_path):
    fake = FakeVllm(engines=1)
    srv = PromServer(fake.text).start()
    jobs = [("vllm", f"127.0.0.1:{srv.port}", {}, srv.path)]
    (tmp_path / "token").write_text(TOKEN + "\n")
    try:
        with running_prometheus(tmp_path, jobs) as prom:
            proxy = BearerProxy(prom.url, TOKEN)
            try:
                wait_until(
                    lambda: prom.value("count(up == 1)") == 1, what="the target up", step=0.2, show=prom.tail
                )
                for _ in range(4):
                    fake.step(0, 10, [10, 6, 0])
                    want = prom.value("sum(vllm:spec_decode_num_drafts_total)") or 0
                    wait_until(
                        lambda w=want: (prom.value("sum(vllm:spec_decode_num_drafts_total)") or 0) >= w + 10,
                        what="a scraped step",
                        step=0.1,
                    )
                cfg = tmp_path / "specwatch.toml"
                cfg.write_text(f'[fleet]\nbearer_token_file = "{tmp_path / "token"}"\n')
                # without the token the proxy refuses: the check in front is real
                none = run_cli("fleet", proxy.url, "--json")
                assert none.returncode == 1 and "authentication failed (HTTP 401)" in none.stderr
                r = run_cli("fleet", proxy.url, "--json", "--config", str(cfg))
                assert r.returncode == 0, r.stderr
                (row,) = json.loads(r.stdout)["instances"]
                assert row["accept_len"] == 2.6 and row["family"] == "vllm"
                for text in (r.stdout, r.stderr):
                    assert CLEAN not in text and "t0ken" not in text
                asked = [(p, a) for p, a in proxy.seen if a is not None]
                assert asked and all(a == f"Bearer {TOKEN}" for _, a in asked)
                assert not any("t0ken" in p for p, _ in proxy.seen)  # in the header only, never a URL
                # the instance's own series (the screen's Enter) through the same proxy and token
                drv = history_of(
                    proxy.url,
                    {"instance": f"127.0.0.1:{srv.port}", "job": "vllm", "engine": "0"},
                    PromAuth(bearer_token=TOKEN),
                )
                pooled = drv.stats.total.pooled_len
                assert pooled.denominator >= 10 and 1 + pooled.numerator / pooled.denominator == 2.6
                # a wrong token: one line, nothing of either token
                (tmp_path / "token").write_text("wrong-" + CLEAN)
                bad = run_cli("fleet", proxy.url, "--json", "--config", str(cfg))
                assert bad.returncode == 1 and bad.stderr.count("\n") == 1, bad.stderr
                assert "authentication failed (HTTP 401)" in bad.stderr
                assert "t0ken" not in bad.stderr + bad.stdout
            finally:
                proxy.stop()
    finally:
        srv.stop()


def test_no_token_on_the_command_line():
    """Secrets are not flags: ``fleet --help`` offers no token or password option."""
    r = run_cli("fleet", "--help")
    assert r.returncode == 0
    for flag in ("--bearer", "--token", "--password"):
        assert flag not in r.stdout
