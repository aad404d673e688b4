"""Benchmark the live path and replay (run by hand).

    python bench/bench_stream.py [--lines 1000] [--rate 200] [--replay-lines 1000000] [--keep]

1. **Append-to-output latency** of ``specwatch stream --jsonl FILE`` (a real subprocess, as a
   user runs it): a writer appends ``--lines`` SGLang ``Decode batch`` lines at ``--rate`` lines/s,
   one ``write`` + flush per line as a logger does; each line carries its sequence number
   (``#running-req``) and its write time in microseconds (``#token``). A reader thread stamps
   each JSON record when it appears on the command's stdout. Reported: p50 / p99 / max latency,
   lines lost or duplicated. Run twice: with inotify wake-ups (the default) and with
   ``--poll 0.1`` (the fallback for network file systems). Target: p99 < 100 ms.
2. **Replay throughput** at full speed (``ReplaySource(speed=None)``) on a generated SGLang log
   (``tools/gen_sample_logs.py --large N``, reused from ``bench/out/`` if present): lines/s of the
   source alone, and of the source feeding :class:`tui.core.formats.LineParser` (what a consumer
   does), next to ``specwatch summary --json`` on the same file.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _latency import LatencyReader, line, pct  # bench/ is the script's directory, first on sys.path
from _logs import large_log  # bench/ is the script's directory, first on sys.path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def latency(n: int, rate: float, extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory(prefix="specwatch-bench-") as d:
        path = Path(d) / "live.log"
        path.write_text("")
        proc = subprocess.Popen(
            [sys.executable, "-m", "tui", "stream", "--jsonl", *extra, str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env=ENV,
        )
        reader = LatencyReader(proc, n)
        got = reader.got
        start = time.monotonic()
        with open(path, "a", buffering=1) as f:
            for i in range(n):
                wait = start + i / rate - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                f.write(line(i))
                f.flush()
        reader.done.wait(10)
        proc.terminate()
        proc.wait(10)
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()
    lat = list(got.values())
    return {
        "lines": n,
        "received": len(got),
        "lost": n - len(got),
        "duplicated": reader.dupes,
        "p50_ms": statistics.median(lat) if lat else None,
        "p99_ms": pct(lat, 99) if lat else None,
        "max_ms": max(lat) if lat else None,
    }


async def replay_rate(path: Path, parse: bool) -> tuple[int, int, float]:
    from tui.core.formats import LineParser
    from tui.core.sources.base import LineBatch
    from tui.core.sources.replay import ReplaySource

    src = ReplaySource(str(path), speed=None)
    parser = LineParser("bench") if parse else None
    lines = items = 0
    t0 = time.perf_counter()
    async for b in src:
        if isinstance(b, LineBatch):
            lines += len(b)
            if parser is not None:
                items += len(parser.feed_batch(b))
    return lines, items, time.perf_counter() - t0


def summary_time(path: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "tui", "summary", "--json", str(path)],
        check=True,
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=200.0)
    ap.add_argument("--replay-lines", type=int, default=1_000_000)
    ap.add_argument("--keep", action="store_true", help="keep the generated replay log")
    ap.add_argument("--skip-replay", action="store_true")
    args = ap.parse_args()

    ok = True
    for label, extra in (("inotify", []), ("polling 0.1 s", ["--poll", "0.1"])):
        r = latency(args.lines, args.rate, extra)
        good = r["lost"] == 0 and r["duplicated"] == 0 and r["p99_ms"] is not None and r["p99_ms"] < 100
        ok = ok and (good or label != "inotify")
        print(
            f"stream --jsonl latency ({label}): {r['received']}/{r['lines']} lines at {args.rate:g}/s, "
            f"lost {r['lost']}, duplicated {r['duplicated']}; p50 {r['p50_ms']:.1f} ms, "
            f"p99 {r['p99_ms']:.1f} ms, max {r['max_ms']:.1f} ms  (target p99 < 100 ms)"
        )
    if not args.skip_replay:
        path = large_log(args.replay_lines)
        path.read_bytes()  # page cache
        try:
            n, _, dt = asyncio.run(replay_rate(path, parse=False))
            print(f"replay --max, source only: {n:,} lines in {dt:.2f} s = {n / dt:,.0f} lines/s")
            n, items, dt2 = asyncio.run(replay_rate(path, parse=True))
            print(
                f"replay --max + LineParser: {n:,} lines ({items:,} items) in {dt2:.2f} s = {n / dt2:,.0f} lines/s"
            )
            st = summary_time(path)
            print(f"summary --json (for comparison, incl. startup): {st:.2f} s = {n / st:,.0f} lines/s")
        finally:
            if not args.keep:
                path.unlink(missing_ok=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
