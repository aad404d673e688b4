"""A generated SGLang log with lines whose accept len and rate the statistics refuse (``1e308``,
``nan``, ``-1``, ``99``), and the same log without them: for the alert tests."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

BAD = ("1e308", "nan", "-1", "99")
START = datetime(2026, 11, 20, 9, 0, 0)


def line(t: int, al: str, rate: str) -> str:
    stamp = (START + timedelta(seconds=t)).strftime("%Y-%m-%d %H:%M:%S")
    return (
        f"[{stamp}] Decode batch, #running-req: 8, #token: 900, token usage: 0.10, accept len: {al}, "
        f"accept rate: {rate}, cuda graph: True, gen throughput (token/s): 300.00, #queue-req: 0\n"
    )


def generated_log(seed: int, bad_every: int = 20) -> tuple[list[str], list[str]]:
    """(the log with bad lines, the same log without them): one record a second, accept len ~1.5
    for 10 minutes (the drift test's warm-up), ~3.9 (rate ~0.97) for 5, then ~1.5 for 5; after every ``bad_every``-th
    good line a line (at the same second) whose accept len and rate are one of :data:`BAD`."""
    rng = random.Random(seed)
    clean: list[str] = []
    mixed: list[str] = []
    for t in range(1200):
        level = 3.9 if 600 <= t < 900 else 1.5
        al = min(4.0, max(1.0, rng.gauss(level, 0.15)))
        good = line(t, f"{al:.2f}", f"{(al - 1) / 3:.2f}")
        clean.append(good)
        mixed.append(good)
        if t % bad_every == bad_every - 1:
            v = BAD[(t // bad_every) % len(BAD)]
            mixed.append(line(t, v, v))
    return mixed, clean
