"""Benchmark the cost of alert rules (run by hand).

    python bench/bench_alerts.py [--lines 200000] [--repeat 3]

1. **stream**: ``specwatch stream --no-follow --jsonl FILE > /dev/null`` on a generated SGLang log
   (one decode line a second, accept len drifting down half-way), without rules and with three
   (``accept_len<2.0 for 2m``, ``accept_rate<0.3``, ``drift``), runs interleaved; the ratio of the
   median (and of the fastest) wall times is the cost of the rules.
2. **engine alone**: records per second through :meth:`tui.core.alerts.engine.AlertEngine.observe_record`
   with the same three rules.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
RULES = ["accept_len<2.0 for 2m", "accept_rate<0.3", "drift"]


def make_log(path: Path, n: int) -> list[float]:
    rng = random.Random(1)
    t0 = 1_767_322_800
    vals = []
    with path.open("w") as f:
        for i in range(n):
            v = (3.0 if i < n // 2 else 2.7) + rng.gauss(0, 0.3)
            vals.append(v)
            ts = datetime.fromtimestamp(t0 + i, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
            f.write(
                f"[{ts} TP0] Decode batch, #running-req: 4, #token: {i}, token usage: 0.01, "
                f"accept len: {v:.2f}, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 99.00, "
                "#queue-req: 0\n"
            )
    return vals


def run_stream(log: Path, rules: list[str]) -> float:
    args = [sys.executable, "-m", "tui", "stream", "--no-follow", "--jsonl", str(log)]
    for r in rules:
        args += ["--alert", r]
    t0 = time.perf_counter()
    subprocess.run(args, stdout=subprocess.DEVNULL, check=True, env=ENV, cwd=ROOT)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    from tui.core.alerts.engine import AlertEngine, parse_rule

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "drift.log"
        vals = make_log(log, a.lines)
        base, with_rules = [], []
        for _ in range(a.repeat):
            base.append(run_stream(log, []))
            with_rules.append(run_stream(log, RULES))
        b, w = statistics.median(base), statistics.median(with_rules)
        print(
            f"stream --jsonl, {a.lines:,} lines: no rules {b:.2f} s, three rules {w:.2f} s, ratio {w / b:.3f}"
        )
    engine = AlertEngine([parse_rule(r) for r in RULES])
    recs = [
        SimpleNamespace(timestamp=float(i), accept_len=v, accept_rate=0.5, throughput=99.0)
        for i, v in enumerate(vals)
    ]
    t0 = time.perf_counter()
    fired = 0
    for r in recs:
        fired += len(engine.observe_record("s", r, 0))
    took = time.perf_counter() - t0
    print(f"engine alone: {len(recs) / took:,.0f} records/s with three rules ({fired} alerts)")


if __name__ == "__main__":
    main()
