"""What the app costs while it follows appended logs: the real CLI in tmux, a real writer.

    python bench/bench_app_cost.py [--sources 1,8,16] [--rate 20] [--seconds 20] [--warmup 4]
                                   [--tree PATH] [--baseline PATH]

For each N, N files in a temporary directory are opened with ``specwatch watch`` in a tmux
session (1 source at 160x45, more at 200x60), and a writer appends SGLang ``Decode batch`` lines
to every file at ``--rate`` lines/s each, one ``write`` per line. After ``--warmup`` seconds the app
process's CPU time (utime + stime from /proc/PID/stat) is read over ``--seconds`` of wall time:
CPU% of one core; so are its wake-ups (voluntary context switches of all its threads, per
second). RSS is VmRSS at the end. Meanwhile the screen is captured every 25 ms: the
first pane's header shows "N lines", so each written line's time to the screen is known (line ->
screen latency, p50/p99; the capture granularity adds up to 25 ms). At the end the screen is
checked: every pane's label and a segment mean ("±") shown, every pane's right border drawn (no
horizontal overflow).

``--tree`` runs another checkout's code (``PYTHONPATH``); ``--baseline PATH`` runs the same
measurements on that checkout first, so the figures are compared within one run (the machine is
shared and noisy: compare ratios).

Targets (issue 14): 1 source <= 10% of one core at 160x45, 8 sources <= 25% at 200x60, latency
p99 <= 0.5 s. Exit status 1 when a target is missed by the tree under test.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLK = os.sysconf("SC_CLK_TCK")
HEADER_LINES = re.compile(r"([\d,]+) lines")


def size_for(n: int) -> tuple[int, int]:
    return (160, 45) if n == 1 else (200, 60)


def decode_line(k: int) -> bytes:
    t = time.time()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))
    al = 2.0 + ((k * 7919) % 100) / 100
    return (
        f"[{stamp}] Decode batch, #running-req: {1 + k % 30}, #token: {1000 + k % 9000}, "
        f"token usage: 0.01, accept len: {al:.2f}, accept rate: {(al - 1) / 3:.2f}, cuda graph: True, "
        f"gen throughput (token/s): {100 + k % 2000:.2f}, #queue-req: 0\n"
    ).encode()


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK  # utime, stime (fields 14, 15)


def wakeups(pid: int) -> int:
    """Voluntary context switches of every thread of ``pid`` so far: how often it went to sleep
    (each sleep is a later wake-up), the figure that drives the app's cost on this kind of VM."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            with open(task / "status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        total += int(line.split()[1])
        except OSError:  # a thread that ended meanwhile
            continue
    return total


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _wait_gone(pid: int, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not os.path.exists(f"/proc/{pid}"):
            return True
        time.sleep(0.05)
    return not os.path.exists(f"/proc/{pid}")


def capture(name: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


class Writer(threading.Thread):
    """Appends one decode line per file every 1/rate s (each line its own write)."""

    def __init__(self, paths: list[Path], rate: float) -> None:
        super().__init__(daemon=True)
        self.fds = [os.open(p, os.O_WRONLY | os.O_APPEND) for p in paths]
        self.rate = rate
        self.stop = threading.Event()
        self.written = 0  # lines per file so far
        self.times: list[float] = []  # monotonic write time of each line of the first file

    def run(self) -> None:
        step = 1.0 / self.rate
        nxt = time.monotonic()
        while not self.stop.is_set():
            for i, fd in enumerate(self.fds):
                os.write(fd, decode_line(self.written))
                if i == 0:
                    self.times.append(time.monotonic())
            self.written += 1
            nxt += step
            delay = nxt - time.monotonic()
            if delay > 0:
                self.stop.wait(delay)
        for fd in self.fds:
            os.close(fd)


def run_one(tree: Path, n: int, rate: float, seconds: float, warmup: float, profile: str = "") -> dict:
    width, height = size_for(n)
    tmp = Path(tempfile.mkdtemp(prefix="specwatch-cost-"))
    paths = [tmp / f"src{i:02d}.log" for i in range(n)]
    pre = 5  # lines already there when the app opens the files
    for p in paths:
        p.write_bytes(b"".join(decode_line(k) for k in range(pre)))
    name = f"specwatch-cost-{uuid.uuid4().hex[:8]}"
    env = (
        f"cd {shlex.quote(str(tmp))} && unset COLUMNS LINES && "
        f"XDG_CONFIG_HOME={shlex.quote(str(tmp / 'xdg'))} PYTHONPATH={shlex.quote(str(tree))} "
        f"TERM=xterm-256color exec"
    )
    prof = ["-m", "cProfile", "-o", profile] if profile else []
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, *prof, "-m", "tui", "watch", *map(str, paths)])
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", str(width), "-y", str(height), f"{env} {cmd}"],
        check=True,
    )
    writer = None
    pid = 0
    try:
        pid = int(
            subprocess.run(
                ["tmux", "display-message", "-p", "-t", name, "#{pane_pid}"], capture_output=True, text=True
            ).stdout.strip()
        )
        end = time.monotonic() + 30
        while time.monotonic() < end and f"src{n - 1:02d}" not in capture(name):
            time.sleep(0.2)
        time.sleep(1.0)
        writer = Writer(paths, rate)
        writer.start()
        time.sleep(warmup)
        c0, w0, t0 = cpu_seconds(pid), wakeups(pid), time.monotonic()
        seen: list[tuple[float, int]] = []  # (capture time, lines shown in the first pane)
        while time.monotonic() - t0 < seconds:
            at = time.monotonic()
            m = HEADER_LINES.search(capture(name))
            if m:
                seen.append((at, int(m.group(1).replace(",", ""))))
            time.sleep(0.025)
        c1, w1, t1 = cpu_seconds(pid), wakeups(pid), time.monotonic()
        rss = rss_mb(pid)
        writer.stop.set()
        writer.join()
        screen = capture(name)
    finally:
        if writer is not None:
            writer.stop.set()
        subprocess.run(["tmux", "send-keys", "-t", name, "q"], capture_output=True)
        if pid:
            _wait_gone(pid, 10.0)
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        if pid and not _wait_gone(pid, 0.5):  # never leave the app running (it outlives its terminal)
            os.kill(pid, signal.SIGTERM)
            if not _wait_gone(pid, 3.0):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)
    # latency: line k (1-based in the file, pre-seeded lines first) is on screen at the first
    # capture that shows a count >= k
    lat: list[float] = []
    times = writer.times
    j = 0
    for k_written, wt in enumerate(times, start=pre + 1):
        if wt < t0 or wt > t1 - 1.0:
            continue
        while j < len(seen) and (seen[j][0] < wt or seen[j][1] < k_written):
            j += 1
        if j < len(seen):
            lat.append(seen[j][0] - wt)
    labels = sum(1 for i in range(n) if f"src{i:02d}" in screen)
    return {
        "n": n,
        "size": f"{width}x{height}",
        "cpu_pct": (c1 - c0) / (t1 - t0) * 100,
        "wakeups": (w1 - w0) / (t1 - t0),
        "rss_mb": rss,
        "lat_n": len(lat),
        "lat_p50": pct(lat, 50),
        "lat_p99": pct(lat, 99),
        "labels": labels,
        "means": screen.count("±"),
        "right_borders": screen.count("╮"),
        "screen": screen,
    }


def report(tag: str, r: dict) -> str:
    lat = (
        f"latency p50 {r['lat_p50'] * 1e3:.0f} ms p99 {r['lat_p99'] * 1e3:.0f} ms ({r['lat_n']} lines)"
        if r["lat_n"]
        else "latency n/a (no line count on screen)"
    )
    return (
        f"{tag:>9} {r['n']:>2} sources {r['size']}: CPU {r['cpu_pct']:5.1f}% of one core, "
        f"{r['wakeups']:.0f} wake-ups/s, RSS {r['rss_mb']:.0f} MB, {lat}; labels {r['labels']}/{r['n']}, '±' {r['means']}, "
        f"right borders {r['right_borders']}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sources", default="1,8,16")
    ap.add_argument("--rate", type=float, default=20.0, help="lines/s per file")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--warmup", type=float, default=4.0)
    ap.add_argument("--tree", default=str(ROOT), help="the checkout to measure (PYTHONPATH)")
    ap.add_argument("--baseline", help="another checkout measured the same way first")
    ap.add_argument("--show", action="store_true", help="print the last screen of each run")
    ap.add_argument("--profile", default="", help="run the app under cProfile, writing this file")
    args = ap.parse_args()
    if shutil.which("tmux") is None:
        print("tmux is required", file=sys.stderr)
        return 2
    ns = [int(x) for x in args.sources.split(",")]
    ok = True
    for n in ns:
        base = None
        if args.baseline:
            base = run_one(Path(args.baseline), n, args.rate, args.seconds, args.warmup)
            print(report("baseline", base), flush=True)
        r = run_one(Path(args.tree), n, args.rate, args.seconds, args.warmup, args.profile)
        print(report("tree", r), flush=True)
        if base is not None and base["cpu_pct"] > 0:
            print(f"          ratio tree/baseline CPU: {r['cpu_pct'] / base['cpu_pct']:.2f}", flush=True)
        if args.show:
            print(r["screen"])
        target = {1: 10.0, 8: 25.0}.get(n)
        if target is not None and r["cpu_pct"] > target:
            ok = False
        if r["lat_n"] and r["lat_p99"] > 0.5:
            ok = False
        if r["labels"] < n or r["right_borders"] < n:
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
