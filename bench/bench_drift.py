"""Calibration of the drift test (run by hand; the numbers in tui/core/stats/drift.py and README).

    python bench/bench_drift.py [--runs 200] [--h 2.2]

Seeded AR(1) series, mean 3.0, per-record sd 0.3: false alarms in ``--runs`` stationary runs of
2,000 values for φ = 0, 0.5 and 0.9; the delay (records) to find a drop of 0.3 in accept len
(φ = 0.9) beginning after 1,000 and after 10,000 records, over 100 runs each (not found within
2,000–3,000 records counts as a miss).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from test_drift import ar1  # noqa: E402

from tui.core.stats.drift import DriftDetector, H  # noqa: E402


def delays(h: float, shift_at: int, n: int) -> tuple[list[int], int]:
    found, missed = [], 0
    for seed in range(100):
        det = DriftDetector(h=h)
        vals = ar1(random.Random(1000 + seed), n, 0.9, shift_at=shift_at, shift=-0.3)
        hit = next((i - shift_at for i, v in enumerate(vals) if det.add(v) and i >= shift_at), None)
        if hit is None:
            missed += 1
        else:
            found.append(hit)
    return sorted(found), missed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--h", type=float, default=H)
    a = ap.parse_args()
    for phi in (0.0, 0.5, 0.9):
        alarms = 0
        for seed in range(a.runs):
            det = DriftDetector(h=a.h)
            alarms += any(det.add(v) for v in ar1(random.Random(seed), 2000, phi))
        print(f"φ = {phi}: false alarms in {alarms} of {a.runs} runs of 2,000 values")
    for at, n in ((1000, 4000), (10000, 12000)):
        d, missed = delays(a.h, at, n)
        print(
            f"drop of 0.3 after {at:,} records: median {d[len(d) // 2]}, 90% within {d[int(0.9 * len(d))]}, "
            f"max {d[-1]} records; not found in {missed} of 100 runs"
        )


if __name__ == "__main__":
    main()
