"""Pooled accept length with dynamic draft lengths (stats/drafts.py): the drafts taken from the
printed means, against the truth of the counts, over many drawn logs.

    python bench/bench_drafts.py [--logs 400] [--lines 60]

Each log draws k (2-8), the draft lengths its batches use (a subset of 1..k, never k alone), the
acceptance probability (0.2-0.9) and the lines' sizes, renders the lines through vLLM 0.33's
format (tests/unit/test_drafts.py, after vllm/v1/spec_decode/metrics.py:120) and reads them as
``summary`` does. Printed per n of lines: the error of the pooled value (median, 95th percentile,
max), how often the 95% interval holds the truth, and the error drafted / k gave before.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

from test_drafts import lines_of, pooled  # noqa: E402


def draw(rng: random.Random) -> tuple[int, tuple[int, ...], float]:
    k = rng.randint(2, 8)
    lengths = tuple(sorted(rng.sample(range(1, k + 1), rng.randint(2, k))))
    return k, lengths, rng.uniform(0.2, 0.9)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=int, default=400)
    ap.add_argument("--lines", default="10,60,300")
    a = ap.parse_args(argv)
    print(
        "| lines | logs | median abs error | p95 abs error | max abs error | 95% CI holds the truth | drafted / k's median error |"
    )
    print("|---|---|---|---|---|---|---|")
    for n in (int(x) for x in a.lines.split(",")):
        rng = random.Random(n)
        errs, held, naive = [], 0, []
        for i in range(a.logs):
            k, lengths, p = draw(rng)
            lines, truth = lines_of(10_000 * n + i, n, k, lengths, p)
            got = pooled(lines)
            errs.append(abs(got["value"] - truth))
            lo, hi = got["ci95"]
            held += lo <= truth <= hi
            acc = sum(int(x.split("Accepted: ")[1].split()[0]) for x in lines)
            drafted = sum(int(x.split("Drafted: ")[1].split()[0]) for x in lines)
            naive.append(abs(1 + acc / (drafted / k) - truth))
        errs.sort()
        print(
            f"| {n} | {a.logs} | {statistics.median(errs):.5f} | {errs[int(0.95 * len(errs)) - 1]:.5f} | "
            f"{errs[-1]:.5f} | {100 * held / a.logs:.1f}% | {statistics.median(naive):.3f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
