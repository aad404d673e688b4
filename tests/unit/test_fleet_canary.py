"""The canary verdict between two label selectors, seeded and fast (the full table is
bench/bench_canary.py's, 200 pairs a cell): on pooled counts over the same window with
``summary``'s estimator it says which question it answers, holds its false rate on A/A pairs of
servers that accept alike, finds +0.2, and is ``insufficient`` with the reason on short history;
the population verdict beside it holds its own A/A (servers drawn with an sd of 0.08)."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

from tui.core.fleet.canary import POPULATION, THESE, these_servers
from tui.core.fleet.groups import group_estimate, welch

_spec = importlib.util.spec_from_file_location(
    "bench_canary", Path(__file__).resolve().parents[2] / "bench" / "bench_canary.py"
)
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_these_servers_a_a_and_a_shift_on_pooled_counts():
    """60 seeded A/A pairs of 6+6 servers of one truth: at most 6 false (10%; measured 1–4% at
    200 pairs a cell); 60 pairs +0.2: found in at least 48 (measured 92% at 200)."""
    rng = random.Random(33)
    false = found = 0
    for _ in range(60):
        out = these_servers(bench.side(rng, 6, 2.6, 0.0), bench.side(rng, 6, 2.6, 0.0))
        assert out["question"] == THESE and out["estimator"] == "pooled"
        false += out["verdict"] in ("higher", "lower")
        hit = these_servers(bench.side(rng, 6, 2.6, 0.0), bench.side(rng, 6, 2.8, 0.0))
        found += hit["verdict"] == "higher"
    assert false <= 6, false
    assert found >= 48, found
    assert hit["a"]["steps"] == 60 and hit["b"]["units"] == 6 and hit["ci95"] is not None


def test_the_population_verdict_says_its_question():
    rng = random.Random(34)
    false = 0
    for _ in range(60):
        a, b = bench.side(rng, 8, 2.6, 0.08), bench.side(rng, 8, 2.6, 0.08)
        false += welch(group_estimate("a", a), group_estimate("b", b))["verdict"] in ("higher", "lower")
    assert false <= 6, false
    assert POPULATION.startswith("servers drawn like these")


def test_short_history_is_insufficient_with_the_reason():
    rng = random.Random(35)
    a = [bench.server(rng, 2.6, steps=10) for _ in range(4)]
    b = [bench.server(rng, 2.9, steps=10) for _ in range(4)]
    out = these_servers(a, b)
    assert out["verdict"] == "insufficient" and "need at least 30 records" in out["reason"]
    assert out["a"]["steps"] == 10 and out["diff"] is not None
    assert these_servers([], b)["reason"].startswith("no drafts in the window on side A")
