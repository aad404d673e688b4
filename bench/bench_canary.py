"""Calibration of the fleet's canary verdicts (``specwatch fleet --compare A B``), seeded.

Two questions, two verdicts (docs/fleet.md, "Canary"):

* **these servers over this window** (the verdict, ``comparison.verdict``): each side's per-step
  sums of accepted tokens and drafts over its servers, compared with ``summary``'s pooled
  estimator and rule (:func:`tui.core.stats.compare.compare`). Its null: the two sets of servers
  accept alike over the window — A/A pairs are servers of the *same* true accept len.
* **servers drawn like these** (``comparison.population``): instances as the unit (the jackknife
  over instances, Welch's t). Its null: both sets drawn from one population of servers whose true
  accept len differs between servers — A/A pairs are servers drawn with an sd of 0.08.

Each cell: ``--pairs`` A/A pairs and as many +0.2 pairs (side B 0.2 higher), groups of m servers
a side, 60 steps, per-step drafts lognormal around each server's own load (lognormal sd 0.5
between servers), acceptance AR(1) in time (φ 0.5, sd 0.1) with binomial counts, k = 3.

    python bench/bench_canary.py              # 200 pairs a cell (the table in docs/fleet.md)
    python bench/bench_canary.py --pairs 1000 # the lead's run
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui.core.fleet.canary import these_servers
from tui.core.fleet.groups import group_estimate, welch
from tui.core.fleet.rows import Instance, pooled

K = 3
T0 = 1_764_597_600.0


def server(
    rng: random.Random,
    al: float,
    steps: int = 60,
    phi: float = 0.5,
    load_sd: float = 0.5,
    step_s: float = 30.0,
) -> Instance:
    """One server's steps: its own load, AR(1) acceptance around ``al``, binomial counts."""
    inst = Instance("vllm", "counters", {}, (), step=step_s)
    load = math.exp(rng.gauss(0, load_sd))
    e = 0.0
    for i in range(steps):
        e = phi * e + rng.gauss(0, 0.1 * math.sqrt(1 - phi * phi))
        p = min(0.999, max(0.001, (al + e - 1) / K))
        d = max(1, int(rng.lognormvariate(math.log(20 * load), 0.5)))
        n = d * K
        a = min(n, max(0, round(rng.gauss(n * p, math.sqrt(n * p * (1 - p))))))
        inst.counts.append((float(a), float(d), None))
        inst.count_times.append(T0 + step_s * i)
    inst.k = float(K)
    inst.draft_tokens = math.fsum(c[1] for c in inst.counts) * K
    inst.estimate = pooled(inst.counts, 1.0 + K)
    inst.accepted = math.fsum(c[0] for c in inst.counts)
    inst.drafts = math.fsum(c[1] for c in inst.counts)
    return inst


def side(rng: random.Random, m: int, mean: float, between_sd: float, **kw) -> list[Instance]:
    return [server(rng, mean + rng.gauss(0, between_sd), **kw) for _ in range(m)]


def cell(seed: int, pairs: int, m_a: int, m_b: int, question: str, **kw) -> dict[str, float]:
    """False verdicts on A/A and +0.2 found, for one question ("these" or "population")."""
    rng = random.Random(seed)
    sd = 0.0 if question == "these" else 0.08
    false = found = insufficient = 0
    for shift, count_false in ((0.0, True), (0.2, False)):
        for _ in range(pairs):
            a = side(rng, m_a, 2.6, sd, **kw)
            b = side(rng, m_b, 2.6 + shift, sd, **kw)
            if question == "these":
                v = these_servers(a, b)["verdict"]
            else:
                v = welch(group_estimate("a", a), group_estimate("b", b))["verdict"]
            insufficient += v == "insufficient"
            if count_false:
                false += v in ("higher", "lower")
            else:
                found += v == "higher"
    return {"false": false / pairs, "found": found / pairs, "insufficient": insufficient / (2 * pairs)}


CELLS = [  # (m_a, m_b, extra settings)
    (4, 4, {}),
    (8, 8, {}),
    (16, 4, {}),
    (4, 4, {"phi": 0.9}),
    (8, 8, {"steps": 30}),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=20261202)
    args = ap.parse_args()
    print(f"{args.pairs} A/A pairs and {args.pairs} +0.2 pairs a cell, seed {args.seed}")
    print("| question | servers A+B | setting | false (A/A) | +0.2 found | insufficient |")
    print("|---|---|---|---|---|---|")
    t0 = time.perf_counter()
    for i, (ma, mb, kw) in enumerate(CELLS):
        for question in ("these", "population"):
            r = cell(args.seed + 17 * i, args.pairs, ma, mb, question, **kw)
            setting = ", ".join(f"{k} {v}" for k, v in kw.items()) or "60 steps, φ 0.5"
            print(
                f"| {question} | {ma}+{mb} | {setting} | {r['false']:.1%} | {r['found']:.1%} | {r['insufficient']:.1%} |"
            )
    print(f"({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
