"""Calibration cells of issue 21 through the path of ``summary --json`` (tests/_calib_util.py),
with few replicates and bounds that a miscalibrated method cannot meet by luck.

For each cell, the bound on false verdicts is the largest count that a method calling A/A pairs
different 20% of the time would reach with probability below 1% (one-sided binomial at the
cell's replicates); the bound on coverage is the smallest count that a method covering 75% of
the time would reach with probability below 1%. A method at the targets (≤ 5% false, ≥ 95%
coverage) meets them with probability above 90%; the seeds make each run the same. The
failures of issue 21 (coverage 55–71% under regime switches, 3% with one 1,000× interval, 92%
false verdicts there) cannot pass. The full table
(≥ 400 replicates per cell) is bench/bench_calibration.py's.
"""

from __future__ import annotations

import random
import re

import pytest
from _calib_util import (
    accept_len_verdict,
    ar1,
    binom_sf,
    cycle,
    lines_cell,
    load_cell,
    load_series,
    load_verdict,
    pooled_cell,
    regime,
    sglang_log,
    summarize,
)

from tui.core.stats.verdicts import comparison

REPS = 60
BAD_FALSE = 0.2  # a false-verdict rate this high must not pass
BAD_COVER = 0.75  # nor a coverage this low
LUCK = 0.01


def max_false(reps: int) -> int:
    """The largest count of false verdicts a BAD_FALSE method reaches with probability < LUCK."""
    k = 0
    while 1.0 - binom_sf(k + 2, reps, BAD_FALSE) < LUCK:  # P(X ≤ k + 1) still small
        k += 1
    return k


def min_covered(reps: int) -> int:
    """The smallest coverage count a BAD_COVER method reaches with probability < LUCK."""
    k = reps
    while binom_sf(k - 1, reps, BAD_COVER) < LUCK:
        k -= 1
    return k


def test_the_bounds_are_strict_enough() -> None:
    assert 1.0 - binom_sf(max_false(REPS) + 1, REPS, BAD_FALSE) < LUCK
    assert binom_sf(min_covered(REPS), REPS, BAD_COVER) < LUCK
    assert max_false(REPS) < 0.1 * REPS and min_covered(REPS) > 0.85 * REPS


@pytest.mark.parametrize(
    "gen,n",
    [
        (lambda r, n, s: ar1(r, n, 0.9, 2.5 + s), 300),
        (lambda r, n, s: ar1(r, n, 0.97, 2.5 + s), 1000),
        (cycle, 3000),
        (regime, 300),
        (regime, 1000),
        (regime, 3000),
    ],
    ids=["ar1-0.9-300", "ar1-0.97-1000", "cycle-3000", "regime-300", "regime-1000", "regime-3000"],
)
def test_mean_of_lines_cells(gen, n) -> None:
    t = lines_cell(gen, n, REPS, seed=n + 21)
    assert t.false <= max_false(t.reps), t
    assert t.covered >= min_covered(t.intervals), t


def test_a_slow_cycle_gets_verdicts_not_absurd_intervals() -> None:
    """A ±0.2 cycle over three periods of the log: the mean is as good as the noise allows; the
    old estimator answered insufficient for nearly all pairs at n = 3,000."""
    t = lines_cell(cycle, 3000, 20, seed=5, shift=0.3)
    assert t.insufficient <= 2 and t.found >= 18, t


def test_near_unit_root_is_no_longer_timid() -> None:
    """AR(1) φ = 0.97 at n = 1,000: the old rule answered insufficient in ~90% of pairs."""
    t = lines_cell(lambda r, n, s: ar1(r, n, 0.97, 2.5 + s), 1000, 20, seed=6)
    assert t.insufficient <= 4, t


@pytest.mark.parametrize("spread,phi", [(100.0, 0.5), (10.0, 0.9)])
def test_pooled_cells_with_heavy_tailed_drafts(spread, phi) -> None:
    t = pooled_cell(100, spread, phi, REPS, seed=int(spread + 10 * phi))
    assert t.false <= max_false(t.reps), t
    assert t.covered >= min_covered(t.intervals), t


def test_one_interval_with_1000x_the_drafts_says_why() -> None:
    t = pooled_cell(100, 1.0, 0.0, 10, seed=3, big=True)
    assert t.false == 0 and t.covered == t.intervals == 10, t
    assert t.insufficient == 10 and "drafts concentrated" in next(iter(t.reasons)), t.reasons


@pytest.mark.parametrize("scale,phi", [(1.0, 0.9), (4.0, 0.5), (4.0, 0.9)])
def test_load_adjusted_cells(scale, phi) -> None:
    t = load_cell(1000, phi, scale, REPS, seed=int(10 * scale + 100 * phi))
    assert t.false <= max_false(t.reps), t
    assert t.covered >= min_covered(t.intervals), t


def test_a_level_that_switches_says_so() -> None:
    """A server whose level steps from 2.2 to 2.8 halfway: not a verdict, and the reason names
    the levels; the interval printed still holds the mean of both."""
    rng = random.Random(4)
    a_vals = [round((2.2 if i < 150 else 2.8) + rng.gauss(0, 0.3), 2) for i in range(300)]
    b_vals = [round(2.5 + rng.gauss(0, 0.3), 2) for _ in range(300)]
    a, b = summarize(sglang_log(a_vals), "a"), summarize(sglang_log(b_vals), "b")
    c = accept_len_verdict(a, b)
    assert c["verdict"] == "insufficient"
    m = re.search(r"A: level not stable \(switches between ~([0-9.]+) and ~([0-9.]+)", c["reason"])
    assert m is not None, c["reason"]
    assert float(m[1]) == pytest.approx(2.2, abs=0.05) and float(m[2]) == pytest.approx(2.8, abs=0.05)
    lo, hi = a.segments[-1].all.accept_len.ci95()
    assert lo <= 2.5 <= hi


def test_the_verdicts_are_those_of_summary_json() -> None:
    rng = random.Random(8)
    for scale in (1.0, 3.0):
        a = summarize(sglang_log(*load_series(rng, 400, 0.5, 1.0)), "a")
        b = summarize(sglang_log(*load_series(rng, 400, 0.5, scale)), "b")
        full = comparison(a, b)
        assert full["accept_len"] == accept_len_verdict(a, b)
        assert full["accept_len_load_adjusted"] == load_verdict(a, b)


def test_zero_variance_is_not_higher() -> None:
    """30 lines of 2.50 against 30 of 2.51 (printed values: the print step's rounding is their
    only variance) and identical exact count ratios on both sides (no variance at all)."""
    c = accept_len_verdict(summarize(sglang_log([2.50] * 30), "a"), summarize(sglang_log([2.51] * 30), "b"))
    assert c["verdict"] == "no_difference"
    from tui.core.stats.compare import compare
    from tui.core.stats.pooled import RatioSeries

    a, b = RatioSeries(1.0), RatioSeries(1.0)
    a.add_many([150.0] * 40, [100.0] * 40)
    b.add_many([160.0] * 40, [100.0] * 40)
    r = compare(a, b)
    assert r.verdict == "insufficient" and "no variation" in r.reason
