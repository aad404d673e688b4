"""Calibration of the drift test, before and after issue 21 in one run (run by hand; the numbers in
docs/alerts.md and tui/core/stats/drift.py).

    python bench/bench_drift.py [--runs 400] [--shift-runs 400]

Seeded AR(1) series, mean 3.0, per-record sd 0.3; every series is fed to both detectors:

* *before*: the detector of main before issue 21 (σ from the 10 warm-up batch means or an AR(1)
  fit with φ capped at 0.95; a fixed limit of 2.2 at every look);
* *after*: :class:`tui.core.stats.drift.DriftDetector` as it is now.

Table 1: runs with a (false) alarm among ``--runs`` stationary runs of 2,000 and of 20,000
values, φ ∈ {0, 0.5, 0.9, 0.97}, with the Wilson 95% interval. Table 2: a sustained drop of 0.3
after 1,000 and after 10,000 records (φ = 0.9 and 0.97): how many runs raised an alarm *before*
the drop (false, counted), how many found the drop (the first alarm at or after it, within 3,000
records), the median and 90th percentile of the delay.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tui.core.stats.drift import DriftDetector  # noqa: E402

PHI_CAP_BEFORE = 0.95


class Before(DriftDetector):
    """The detector as it was on main before issue 21 (89c8dc5 … f18e580)."""

    def _baseline(self) -> None:
        means = self._means
        mu = sum(means) / len(means)
        sd_means = math.sqrt(sum((m - mu) ** 2 for m in means) / (len(means) - 1))
        vals = self._warm_values
        vm = sum(vals) / len(vals)
        dev = [v - vm for v in vals]
        s2 = sum(d * d for d in dev) / (len(vals) - 1)
        c1 = sum(a * b for a, b in zip(dev, dev[1:])) / (len(vals) - 1)
        phi = min(max(c1 / s2, 0.0), PHI_CAP_BEFORE) if s2 > 0 else 0.0
        b = self.batch
        sd_ar1 = math.sqrt(s2 / b * ((1 + phi) / (1 - phi) - 2 * phi * (1 - phi**b) / (b * (1 - phi) ** 2)))
        self.mu, self.sigma = mu, max(sd_means, sd_ar1, 1e-6 * max(abs(mu), 1.0))
        self._warm_values = []

    def _step(self, mean: float):
        assert self.mu is not None and self.sigma is not None
        self._means.append(mean)
        self._prefix.append(self._prefix[-1] + mean)
        n = len(self._means)
        total = self._prefix[-1]
        best = 0.0
        for t in range(3, n - 3 + 1):
            best = max(best, abs(self._prefix[t] - t * total / n))
        if best / (self.sigma * math.sqrt(n)) <= 2.2:
            return None
        self.reset()
        return True


def ar1(
    rng: random.Random, n: int, phi: float, shift_at: int | None = None, shift: float = 0.0
) -> list[float]:
    sd, mu = 0.3, 3.0
    e = sd * math.sqrt(1 - phi * phi)
    x = rng.gauss(0, sd)
    out = []
    for i in range(n):
        x = phi * x + rng.gauss(0, e)
        out.append(mu + x + (shift if shift_at is not None and i >= shift_at else 0.0))
    return out


def wilson(k: int, n: int) -> tuple[float, float]:
    z = 1.96
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, c - h), min(1.0, c + h)


def pct(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k:4d}/{n} = {100 * k / n:5.1f}% [{100 * lo:4.1f}, {100 * hi:4.1f}]"


def alarms_at(det: DriftDetector, vals: list[float]) -> list[int]:
    return [i for i, v in enumerate(vals) if det.add(v) is not None]


def false_alarms(runs: int) -> None:
    print("Table 1: runs with a false alarm (stationary AR(1), mean 3.0, sd 0.3; Wilson 95%)")
    print(f"{'phi':>5} {'values':>7}  {'before':<32} {'after':<32}")
    for n in (2000, 20000):
        for phi in (0.0, 0.5, 0.9, 0.97):
            k_before = k_after = 0
            for seed in range(runs):
                vals = ar1(random.Random(seed * 7919 + n), n, phi)
                k_before += bool(alarms_at(Before(), vals))
                k_after += bool(alarms_at(DriftDetector(), vals))
            print(f"{phi:5.2f} {n:7,d}  {pct(k_before, runs):<32} {pct(k_after, runs):<32}", flush=True)


def shifts(runs: int) -> None:
    print(
        "\nTable 2: a sustained drop of 0.3 (found: first alarm at or after the drop, within 3,000 records)"
    )
    print(
        f"{'phi':>5} {'after':>7} {'who':<7} {'false before it':<30} {'found':<30} {'median':>6} {'90%':>6}"
    )
    for phi in (0.9, 0.97):
        for at in (1000, 10000):
            for name, cls in (("before", Before), ("after", DriftDetector)):
                early = found = 0
                delays = []
                for seed in range(runs):
                    vals = ar1(
                        random.Random(100_000 + seed * 31 + at), at + 3000, phi, shift_at=at, shift=-0.3
                    )
                    hits = alarms_at(cls(), vals)
                    early += any(i < at for i in hits)
                    late = [i - at for i in hits if i >= at]
                    if late:
                        found += 1
                        delays.append(late[0])
                delays.sort()
                med = delays[len(delays) // 2] if delays else -1
                p90 = delays[int(0.9 * len(delays))] if delays else -1
                print(
                    f"{phi:5.2f} {at:7,d} {name:<7} {pct(early, runs):<30} {pct(found, runs):<30} {med:6d} {p90:6d}",
                    flush=True,
                )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--shift-runs", type=int, default=400)
    a = ap.parse_args()
    t0 = time.perf_counter()
    false_alarms(a.runs)
    shifts(a.shift_runs)
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
