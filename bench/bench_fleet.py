"""The fleet at scale (issue 24): 1,000 vLLM engines' history written as OpenMetrics, turned into
TSDB blocks by ``promtool tsdb create-blocks-from openmetrics`` and served by a real Prometheus on
127.0.0.1; then

* ``specwatch fleet --json`` (the CLI, a subprocess): wall time, and the instances it found;
* the fleet screen (the real app under ``run_test``) on the same Prometheus: the time from a
  refresh's answer to the table drawn, the latency of keys (sort, filter), and the CPU the app
  uses at a 5 s refresh, as a share of one core over 30 s.

Run by hand: ``python bench/bench_fleet.py [--instances 1000] [--hours 1]``; ``--fresh 60`` starts
an empty Prometheus that scrapes the fleet (one exporter target, ``honor_labels``) every second
and measures after 60 s (a Prometheus started a moment ago: the queries follow the history it
has); figures are printed with the load average. ``fleet --json`` and the screen each run in a
child process whose peak RSS is its own (``os.wait4``). Keys and Enter are timed to the frame
that shows their result (``App._display``), Enter to the frame with the instance's records in its
pane's numbers. 10,000 instances for memory: ``--instances 10000 --step 60 --runs 1``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_openmetrics(path: Path, n: int, hours: float, step: int, end: int) -> int:
    """Counters of ``n`` engines (2 per host), one sample per ``step`` seconds; returns samples."""
    start = end - int(hours * 3600)
    times = list(range(start, end + 1, step))
    samples = 0
    with open(path, "w") as f:
        for name, kind in (
            ("vllm:spec_decode_num_drafts", "counter"),
            ("vllm:spec_decode_num_accepted_tokens", "counter"),
            ("vllm:spec_decode_num_draft_tokens", "counter"),
            ("vllm:generation_tokens", "counter"),
        ):
            f.write(f"# TYPE {name} {kind}\n")
            for i in range(n):
                host, engine = i // 2, i % 2
                group = "canary" if host % 10 == 0 else "stable"
                labels = f'instance="gpu{host:04d}:8000",job="vllm",engine="{engine}",group="{group}"'
                al = 2.5 + 0.1 * ((i * 7919) % 11 - 5) / 5
                total = 0.0
                for k, t in enumerate(times):
                    d = 400 + (k * 37 + i) % 50
                    inc = {
                        "vllm:spec_decode_num_drafts": d,
                        "vllm:spec_decode_num_accepted_tokens": round((al - 1) * d),
                        "vllm:spec_decode_num_draft_tokens": 3 * d,
                        "vllm:generation_tokens": round(al * d),
                    }[name]
                    total += inc
                    f.write(f"{name}_total{{{labels}}} {total:g} {t}\n")
                    samples += 1
        f.write("# EOF\n")
    return samples


def query_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/api/v1/query?query=vector(1)", timeout=2) as r:
            return json.loads(r.read())["status"] == "success"
    except OSError:
        return False


async def screen_figures(url: str, refresh_s: float, cpu_seconds: float, window: float) -> dict:
    """The screen's figures, each to the frame that shows it (``App._display``: the frame
    written to the terminal), not to the return of ``pilot.press`` (which waits for the
    app's idle and adds tens of ms of its own; a key bound to nothing gives that baseline)."""
    from textual import events

    from tui.app import SpecwatchApp
    from tui.core.fleet.fetch import FleetQuery
    from tui.panes.fleet import FleetPlan
    from tui.panes.launch import LaunchPlan
    from tui.screens.fleet import FleetScreen, InstanceScreen

    plan = FleetPlan(url, FleetQuery(window=window), refresh=refresh_s, timeout=60)
    app = SpecwatchApp(LaunchPlan([], fleet=plan), remember_theme=False)
    out: dict = {}
    frames: list[float] = []
    shown: list[float] = []
    data_frame: list[float] = []
    display = app._display

    def frame(screen, renderable) -> None:
        display(screen, renderable)
        now = time.perf_counter()
        frames.append(now)
        if isinstance(screen, InstanceScreen) and screen.panes and screen.panes[0].drawn_records:
            data_frame.append(now)

    app._display = frame  # type: ignore[method-assign]

    async def key_to_frame(key: str, drawn: bool) -> float:
        """Seconds from the key's event to the first frame after its action drew (``drawn``:
        the action calls the screen's ``show``; else the first frame after the key)."""
        mark = len(shown)
        t = time.perf_counter()
        app.post_message(events.Key(key, None))
        deadline = t + 30
        while time.perf_counter() < deadline:
            await asyncio.sleep(0.001)
            after = shown[mark] if drawn and len(shown) > mark else (t if not drawn else None)
            if after is not None:
                later = [f for f in frames if f > after]
                if later:
                    return later[0] - t
        raise AssertionError(f"no frame after {key!r}")

    async with app.run_test(size=(200, 60)) as pilot:
        while not (isinstance(app.screen, FleetScreen) and app.screen.refreshes >= 1):
            await pilot.pause(0.05)
        screen = app.screen
        assert isinstance(screen, FleetScreen)
        show = screen.show

        def timed_show() -> None:
            show()
            shown.append(time.perf_counter())

        screen.show = timed_show  # type: ignore[method-assign]
        out["rows"] = len(screen.query_one("#fleet-table").rows)
        await pilot.pause(0.5)
        t = time.perf_counter()
        show()
        out["draw_s"] = time.perf_counter() - t
        out["key_s"] = [await key_to_frame(k, True) for k in ("s", "s", "s", "b", "b")]
        out["cursor_s"] = [await key_to_frame(k, False) for k in ("down", "down", "up")]
        for key in ("x", "x"):  # a key bound to nothing: pilot.press's own overhead
            t = time.perf_counter()
            await pilot.press(key)
            out.setdefault("base_s", []).append(time.perf_counter() - t)
        for key in ("s", "s"):
            t = time.perf_counter()
            await pilot.press(key)
            out.setdefault("press_s", []).append(time.perf_counter() - t)
        before = screen.refreshes
        c0, w0 = time.process_time(), time.perf_counter()
        await asyncio.sleep(cpu_seconds)
        out["cpu_share"] = (time.process_time() - c0) / (time.perf_counter() - w0)
        out["refreshes_in_cpu_window"] = screen.refreshes - before
        out["skipped_ticks"] = screen.skipped
        for _ in range(5):
            data_frame.clear()
            await pilot.press("home")
            await pilot.pause(0.3)
            t = time.perf_counter()
            busy = screen.view.asking_since is not None
            app.post_message(events.Key("enter", None))
            deadline = t + 60
            while not data_frame and time.perf_counter() < deadline:
                busy = busy or screen.view.asking_since is not None
                await asyncio.sleep(0.002)
            out.setdefault("enter_during_refresh", []).append(busy)
            assert data_frame, "no frame with the instance's records"
            out.setdefault("enter_s", []).append(data_frame[0] - t)
            await pilot.pause(0.5)
            await pilot.press("escape")
            while not isinstance(app.screen, FleetScreen):
                await pilot.pause(0.05)
            await pilot.pause(1.0)
    out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def run_measured(cmd: list[str]) -> tuple[float, int, str, str, float]:
    """(wall s, exit status, stdout, stderr, peak RSS MB) of one child (``os.wait4``: its own
    peak, not the largest of every child so far)."""
    t = time.perf_counter()
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        proc = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t
        out_f.seek(0)
        err_f.seek(0)
        return wall, proc.returncode, out_f.read().decode(), err_f.read().decode(), usage.ru_maxrss / 1024


class Exporter:
    """A fresh fleet's /metrics: ``n`` vLLM engines' counters in one target (``honor_labels``
    keeps their ``instance`` labels), growing with the clock, for a Prometheus started empty
    that scrapes it every second (``--fresh``: the queries follow the history it has)."""

    def __init__(self, n: int) -> None:
        self.n, self.t0 = n, time.time()

    def text(self) -> bytes:
        el = time.time() - self.t0
        lines = []
        for name in ("drafts", "accepted_tokens", "draft_tokens"):
            lines.append(f"# TYPE vllm:spec_decode_num_{name} counter")
            for i in range(self.n):
                host, engine = i // 2, i % 2
                group = "canary" if host % 10 == 0 else "stable"
                labels = f'instance="gpu{host:04d}:8000",job="vllm",engine="{engine}",group="{group}"'
                al = 2.5 + 0.1 * ((i * 7919) % 11 - 5) / 5
                d = int(el * (27 + i % 7))
                v = {"drafts": d, "accepted_tokens": int((al - 1) * d), "draft_tokens": 3 * d}[name]
                lines.append(f"vllm:spec_decode_num_{name}_total{{{labels}}} {v}")
        return ("\n".join(lines) + "\n").encode()

    def serve(self) -> int:
        import http.server
        import threading

        exporter = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = exporter.text()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server.server_address[1]


def print_screen(fig: dict, cpu_seconds: float) -> None:
    ms = ", ".join
    print(f"screen: {fig['rows']} rows; table drawn in {fig['draw_s'] * 1000:.0f} ms after an answer")
    print(
        "screen: keys (s, s, s, b, b) to their frame "
        + ms(f"{k * 1000:.0f}" for k in fig["key_s"])
        + " ms; cursor (down, down, up) "
        + ms(f"{k * 1000:.0f}" for k in fig["cursor_s"])
        + " ms; through pilot.press: s "
        + ms(f"{k * 1000:.0f}" for k in fig["press_s"])
        + " ms, a key bound to nothing "
        + ms(f"{k * 1000:.0f}" for k in fig["base_s"])
        + " ms"
    )
    print(
        f"screen: CPU {fig['cpu_share'] * 100:.1f}% of a core over {cpu_seconds:g} s at a 5 s refresh "
        f"({fig['refreshes_in_cpu_window']} refreshes in it, {fig['skipped_ticks']} ticks skipped)"
    )
    print(
        "screen: Enter to the frame with the instance's records "
        + ms(f"{k * 1000:.0f}" for k in fig["enter_s"])
        + " ms"
    )
    print(f"screen: peak RSS {fig['maxrss_mb']:.0f} MB (the app's process)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", type=int, default=1000)
    ap.add_argument("--hours", type=float, default=1.0)
    ap.add_argument("--step", type=int, default=15)
    ap.add_argument("--cpu-seconds", type=float, default=30.0)
    ap.add_argument("--runs", type=int, default=3, help="fleet --json runs")
    ap.add_argument("--no-screen", action="store_true")
    ap.add_argument(
        "--fresh",
        type=float,
        default=0.0,
        metavar="S",
        help="a Prometheus started empty that scrapes the fleet every 1 s, measured after S s",
    )
    ap.add_argument("--screen", metavar="URL", help=argparse.SUPPRESS)  # the child: the screen's figures
    ap.add_argument("--window", type=float, default=3600.0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.screen:
        print(json.dumps(asyncio.run(screen_figures(args.screen, 5.0, args.cpu_seconds, args.window))))
        return
    prom, promtool = shutil.which("prometheus"), shutil.which("promtool")
    assert prom and promtool, "apt-get install prometheus"
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        config = "global:\n  scrape_interval: 15s\n"
        if args.fresh:
            port = Exporter(args.instances).serve()
            config = (
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n"
                f"  - job_name: fleet\n    honor_labels: true\n    static_configs:\n"
                f"      - targets: ['127.0.0.1:{port}']\n"
            )
        else:
            end = int(time.time()) - 60
            t = time.perf_counter()
            samples = write_openmetrics(tmp_path / "fleet.om", args.instances, args.hours, args.step, end)
            print(f"openmetrics: {samples:,} samples written in {time.perf_counter() - t:.1f} s")
            t = time.perf_counter()
            subprocess.run(
                [
                    promtool,
                    "tsdb",
                    "create-blocks-from",
                    "openmetrics",
                    str(tmp_path / "fleet.om"),
                    str(tmp_path / "data"),
                ],
                check=True,
                capture_output=True,
            )
            (tmp_path / "fleet.om").unlink()
            print(f"promtool create-blocks: {time.perf_counter() - t:.1f} s")
        port = free_port()
        (tmp_path / "prometheus.yml").write_text(config)
        proc = subprocess.Popen(
            [
                prom,
                f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        window = "1h" if not args.fresh else "30m"
        try:
            deadline = time.monotonic() + 120
            while not query_ok(url):
                assert time.monotonic() < deadline, "Prometheus did not start"
                time.sleep(0.2)
            if args.fresh:
                time.sleep(args.fresh)
                print(f"fresh Prometheus: {args.instances} engines scraped every 1 s for {args.fresh:g} s")
            print(
                f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)"
            )
            for run in range(args.runs):
                wall, rc, out, err, rss = run_measured(
                    [
                        sys.executable,
                        "-m",
                        "tui",
                        "fleet",
                        url,
                        "--json",
                        "--window",
                        window,
                        "--timeout",
                        "120",
                    ]
                )
                assert rc == 0, err
                doc = json.loads(out)
                valued = sum(1 for i in doc["instances"] if i.get("accept_len") is not None)
                print(
                    f"fleet --json run {run + 1}: {wall:.2f} s, peak RSS {rss:.0f} MB, "
                    f"{len(doc['instances'])} instances ({valued} with a value), {doc['queries']} queries, "
                    f"step {doc['step_s']:g} s"
                )
            if not args.no_screen:
                wall, rc, out, err, rss = run_measured(
                    [
                        sys.executable,
                        str(Path(__file__).resolve()),
                        "--screen",
                        url,
                        "--window",
                        str(3600.0 if not args.fresh else 1800.0),
                        "--cpu-seconds",
                        str(args.cpu_seconds),
                    ]
                )
                assert rc == 0, err[-3000:]
                print_screen(json.loads(out.strip().splitlines()[-1]), args.cpu_seconds)
                print(f"screen: the child's peak RSS (wait4) {rss:.0f} MB")
            print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        finally:
            proc.terminate()
            proc.wait(timeout=20)


if __name__ == "__main__":
    os.environ.setdefault("XDG_CONFIG_HOME", tempfile.mkdtemp())
    main()
