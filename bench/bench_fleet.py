"""The fleet at scale (issue 24): 1,000 vLLM engines' history written as OpenMetrics, turned into
TSDB blocks by ``promtool tsdb create-blocks-from openmetrics`` and served by a real Prometheus on
127.0.0.1; then

* ``specwatch fleet --json`` (the CLI, a subprocess): wall time, and the instances it found;
* the fleet screen (the real app under ``run_test``) on the same Prometheus: the time from a
  refresh's answer to the table drawn, the latency of keys (sort, filter), and the CPU the app
  uses at a 5 s refresh, as a share of one core over 30 s.

Run by hand: ``python bench/bench_fleet.py [--instances 1000] [--hours 1]``; ``--fresh`` gives the
Prometheus only a minute of history at 1 s samples (a Prometheus started a moment ago: the
queries follow the history it has); figures are printed. The screen's Enter is timed to its data
(the instance's history records in its pane).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
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


async def screen_figures(url: str, refresh_s: float, cpu_seconds: float) -> dict:
    from tui.app import SpecwatchApp
    from tui.core.fleet.fetch import FleetQuery
    from tui.panes.fleet import FleetPlan
    from tui.panes.launch import LaunchPlan
    from tui.screens.fleet import FleetScreen

    plan = FleetPlan(url, FleetQuery(window=3600.0), refresh=refresh_s, timeout=60)
    app = SpecwatchApp(LaunchPlan([], fleet=plan), remember_theme=False)
    out: dict = {}
    async with app.run_test(size=(200, 60)) as pilot:
        while not (isinstance(app.screen, FleetScreen) and app.screen.refreshes >= 1):
            await pilot.pause(0.05)
        screen = app.screen
        out["rows"] = len(screen.query_one("#fleet-table").rows)
        t = time.perf_counter()
        screen.show()
        out["draw_s"] = time.perf_counter() - t
        for key in ("x", "x"):  # a key bound to nothing: the baseline of a press in run_test
            t = time.perf_counter()
            await pilot.press(key)
            out.setdefault("base_s", []).append(time.perf_counter() - t)
        for key in ("s", "s", "b"):
            t = time.perf_counter()
            await pilot.press(key)
            out.setdefault("key_s", []).append(time.perf_counter() - t)
        c0, w0 = time.process_time(), time.perf_counter()
        await pilot.pause(cpu_seconds)
        out["cpu_share"] = (time.process_time() - c0) / (time.perf_counter() - w0)
        out["refreshes_in_cpu_window"] = screen.refreshes
        out["skipped_ticks"] = screen.skipped
        from tui.screens.fleet import InstanceScreen

        t = time.perf_counter()
        await pilot.press("home", "enter")
        while not (
            isinstance(app.screen, InstanceScreen)
            and app.screen.states
            and app.screen.states[0].stats.records
        ):
            await pilot.pause(0.01)
        out["enter_s"] = time.perf_counter() - t
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", type=int, default=1000)
    ap.add_argument("--hours", type=float, default=1.0)
    ap.add_argument("--step", type=int, default=15)
    ap.add_argument("--cpu-seconds", type=float, default=30.0)
    ap.add_argument("--fresh", action="store_true", help="one minute of history at 1 s samples")
    args = ap.parse_args()
    if args.fresh:
        args.hours, args.step = 60 / 3600, 1
    prom, promtool = shutil.which("prometheus"), shutil.which("promtool")
    assert prom and promtool, "apt-get install prometheus"
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        end = int(time.time()) - (5 if args.fresh else 60)
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
        print(f"promtool create-blocks: {time.perf_counter() - t:.1f} s")
        port = free_port()
        (tmp_path / "prometheus.yml").write_text("global:\n  scrape_interval: 15s\n")
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
        try:
            deadline = time.monotonic() + 120
            while not query_ok(url):
                assert time.monotonic() < deadline, "Prometheus did not start"
                time.sleep(0.2)
            for run in range(3):
                t = time.perf_counter()
                r = subprocess.run(
                    [sys.executable, "-m", "tui", "fleet", url, "--json", "--window", "1h"],
                    capture_output=True,
                    text=True,
                    cwd=ROOT,
                )
                wall = time.perf_counter() - t
                assert r.returncode == 0, r.stderr
                doc = json.loads(r.stdout)
                print(
                    f"fleet --json run {run + 1}: {wall:.2f} s, {len(doc['instances'])} instances, "
                    f"{doc['queries']} queries, step {doc['step_s']:g} s"
                )
            fig = asyncio.run(screen_figures(url, 5.0, args.cpu_seconds))
            print(f"screen: {fig['rows']} rows; table drawn in {fig['draw_s'] * 1000:.0f} ms after an answer")
            print(
                "screen: keys (s, s, b) answered in "
                + ", ".join(f"{k * 1000:.0f} ms" for k in fig["key_s"])
                + "; a key bound to nothing, the same way: "
                + ", ".join(f"{k * 1000:.0f} ms" for k in fig["base_s"])
            )
            print(
                f"screen: CPU {fig['cpu_share'] * 100:.1f}% of a core over {args.cpu_seconds:g} s at a 5 s refresh "
                f"({fig['refreshes_in_cpu_window']} refreshes so far, {fig['skipped_ticks']} ticks skipped)"
            )
            print(f"screen: Enter to the instance's first records {fig['enter_s'] * 1000:.0f} ms")
        finally:
            proc.terminate()
            proc.wait(timeout=20)


if __name__ == "__main__":
    os.environ.setdefault("XDG_CONFIG_HOME", tempfile.mkdtemp())
    main()
