"""Logs the benchmarks read: generated once by tools/gen_sample_logs.py into bench/out/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def large_log(lines: int) -> Path:
    """bench/out/large_LINES.log (``gen_sample_logs.py --large LINES``), generated if missing."""
    path = ROOT / "bench" / "out" / f"large_{lines}.log"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        print(f"generating {path} ...", file=sys.stderr, flush=True)
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "tools" / "gen_sample_logs.py"),
                "--large",
                str(lines),
                "--out",
                str(path),
            ],
            check=True,
            cwd=ROOT,
        )
    return path
