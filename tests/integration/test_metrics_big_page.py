"""A /metrics page of 10^6 series (issue 29 item 7), made here and served from a local HTTP
server: half of them series of a metric no family reads, half a ``vllm:`` histogram with a label
per request (what the cap is for), then a vLLM server's spec-decode counters.

* ``summary`` of it stays under 200 MB of peak RSS (the child's own, by ``getrusage`` in a wrapper
  process whose only child it is), says which series it did not keep, and gives the right numbers;
* ``export`` of it answers its own /metrics with 200 every time while it scrapes, and stops on
  SIGTERM with one line (the time it took is printed; the 2 s are the program's).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from _prom_util import FakeVllm
from _signal_util import alive
from _wait import wait_until

ROOT = Path(__file__).resolve().parents[2]
SERIES = 1_000_000
RSS_LIMIT_KB = 200 * 1024

WRAPPER = (
    "import resource, subprocess, sys\n"
    "p = subprocess.run(sys.argv[1:])\n"
    "print('peak_rss_kb', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(p.returncode)\n"
)


class BigPage:
    """The page's 10^6 series (made once) and a vLLM server's counters after them; every answer
    moves the counters on by one step per engine (engine 0: 10 drafts, 18 accepted; engine 1: 20
    drafts, 16 accepted), so any two scrapes make one window of each."""

    def __init__(self) -> None:
        half = SERIES // 2
        other = (f'http_requests_total{{path="/i/{i}",code="200"}} {i}\n' for i in range(half))
        hist = (f'vllm:request_latency_seconds_bucket{{request_id="r{i}",le="0.5"}} 1\n' for i in range(half))
        self.junk = ("# TYPE http_requests_total counter\n" + "".join(other) + "".join(hist)).encode()
        self.fake = FakeVllm(engines=2, k=3)
        page = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                body = page.junk + page.fake.text().encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:  # the scraper gave up (stopped)
                    return
                page.fake.step(0, 10, [8, 6, 4])
                page.fake.step(1, 20, [10, 5, 1])

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"metrics+http://127.0.0.1:{self.server.server_address[1]}/metrics"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def big_page():
    page = BigPage()
    yield page
    page.close()


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_summary_of_a_million_series_is_bounded_and_right(big_page):
    assert len(big_page.junk) > 50 << 20  # the size of the page the issue measured (55 MB)
    cmd = [sys.executable, "-m", "tui", "summary", "--json", big_page.url]
    cmd += ["--duration", "1", "--scrape-interval", "1", "--scrape-timeout", "120"]
    r = subprocess.run(
        [sys.executable, "-c", WRAPPER, *cmd],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=ROOT,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    peak = int(r.stderr.rsplit("peak_rss_kb", 1)[1].split()[0])
    print(f"\nsummary of {SERIES:,} series: peak RSS {peak / 1024:.0f} MB")
    assert peak < RSS_LIMIT_KB, f"peak RSS {peak / 1024:.0f} MB"
    src = json.loads(r.stdout)["sources"][0]
    assert src["metrics"]["scrapes"] == 2 and src["records"] == 2
    # engine 0: 1 + 18/10 = 2.8, engine 1: 1 + 16/20 = 1.8 (the mean of the printed values)
    assert src["accept_len"]["mean"] == pytest.approx(2.3)
    events = " ".join(src["metrics"]["events"])
    assert "490,000 series of the metrics specwatch reads were not kept" in events
    assert "vllm:request_latency_seconds_bucket (490,000 more)" in events


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def test_export_of_a_million_series_answers_and_stops(big_page):
    cmd = [sys.executable, "-m", "tui", "export", "--prometheus", "127.0.0.1:0", big_page.url]
    cmd += ["--scrape-interval", "1", "--scrape-timeout", "120"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=_env(), cwd=ROOT)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert "serving http://" in first, first
        url = first.split("serving ", 1)[1].split(" ", 1)[0]
        statuses: list[int] = []

        def numbers_served() -> bool:
            status, body = _get(url)
            statuses.append(status)
            return status == 200 and b"specwatch_accept_len" in body and len(statuses) >= 5

        wait_until(numbers_served, 300, what="the exporter's numbers of the big page", step=0.3)
        assert set(statuses) == {200}, statuses
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        wait_until(
            lambda: not alive(proc.pid) or proc.poll() is not None, 60, what="export stopped", step=0.01
        )
        took = time.monotonic() - start
        rest = proc.stderr.read()
        proc.wait()
        print(
            f"\nexport of {SERIES:,} series: {len(statuses)} answers, all 200; stopped {took:.2f} s after SIGTERM"
        )
        assert proc.returncode == 143
        assert rest.strip().splitlines()[-1] == "specwatch export: stopped by SIGTERM"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
