"""Benchmark ``summary --since/--until`` against a full read of the same large log (issue 22 item 6).

    python bench/bench_window.py [--lines 5000000] [--reps 3] [--since T] [--until T] [--gzip]

The log is ``bench/out/large_N.log`` (``tools/gen_sample_logs.py --large N``: about ten lines per
second of log from 2026-02-26 14:00, so 5M lines span about six days). It is read once untimed
(page cache), then ``python -m tui summary --json FILE`` and the same with ``--since``/``--until``
(default: one hour, 2026-03-01 12:00 to 13:00) run alternately ``--reps`` times each. Printed:
best and median wall time of each, the ratio, and the records each found. The windowed answer is
checked against the full read's: its record count must equal the number of ``Decode batch``
lines stamped inside the window (counted here with a plain scan of the file), so a fast wrong
answer does not pass. ``--gzip`` also times both on a gzip copy (the window is then cut while
streaming: decompression of everything before the window's end is still paid).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _logs import ROOT, large_log


def run(args: list[str]) -> tuple[float, dict]:
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "tui", "summary", "--json", *args], capture_output=True, text=True, cwd=ROOT
    )
    took = time.perf_counter() - t0
    if out.returncode != 0:
        sys.exit(f"failed: {args}: {out.stderr}")
    return took, json.loads(out.stdout)["sources"][0]


def count_inside(path: Path, since: str, until: str) -> int:
    lo, hi = f"[{since}".encode(), f"[{until}".encode()
    n = 0
    with open(path, "rb") as f:
        for line in f:
            if b"Decode batch" in line and lo <= line[:20] < hi:
                n += 1
    return n


def compare(path: Path, window: list[str], reps: int) -> tuple[dict, dict]:
    full_t, win_t = [], []
    full = win = {}
    for _ in range(reps):
        t, full = run([str(path)])
        full_t.append(t)
        t, win = run([*window, str(path)])
        win_t.append(t)
    print(f"  {path.name}")
    print(
        f"    full read   best {min(full_t):7.3f} s  median {statistics.median(full_t):7.3f} s  records {full['records']}"
    )
    print(
        f"    window      best {min(win_t):7.3f} s  median {statistics.median(win_t):7.3f} s  records {win['records']}"
    )
    print(f"    window/full {min(win_t) / min(full_t):.3f}  ({win['window']})")
    return full, win


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=5_000_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--since", default="2026-03-01 12:00:00")
    ap.add_argument("--until", default="2026-03-01 13:00:00")
    ap.add_argument("--gzip", action="store_true")
    a = ap.parse_args()
    path = large_log(a.lines)
    with open(path, "rb") as f:  # into the page cache
        while f.read(1 << 24):
            pass
    window = ["--since", a.since, "--until", a.until]
    print(
        f"{a.lines:,} lines, {path.stat().st_size / 1e6:.0f} MB, window {a.since} .. {a.until}, {a.reps} reps"
    )
    _, win = compare(path, window, a.reps)
    expected = count_inside(path, a.since, a.until)
    ok = win["records"] == expected
    print(
        f"  check: {win['records']} records in the window, {expected} Decode batch lines stamped in it: {'ok' if ok else 'WRONG'}"
    )
    if a.gzip:
        gz = path.with_suffix(".log.gz")
        if not gz.exists():
            with open(path, "rb") as src, gzip.open(gz, "wb", compresslevel=6) as dst:
                shutil.copyfileobj(src, dst, 1 << 24)
        _, gwin = compare(gz, window, a.reps)
        ok = ok and gwin["records"] == expected
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
