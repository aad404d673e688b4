"""Level 1 of the long-run variance of a mean (tui/core/stats/lrv.py, issue 21): the AR(1) under
white noise is used where a slow component sits under per-line noise (a traffic mix that flips),
and nowhere else."""

from __future__ import annotations

import random

from _calib_util import ar1, regime

from tui.core.stats.lrv import ar1_variance, first_level, long_run_variance


def test_a_traffic_mix_that_flips_is_not_read_as_a_weak_ar1() -> None:
    """Levels 2.2 / 2.8 with ~50-line dwell times under per-line noise of 0.3: about 1 value in 25
    is independent (the long-run variance is ~25× the variance over n). The lag-1 AR(1) sees an
    AR(1) of ~0.5 (3×); level 1 must see most of the rest."""
    rng = random.Random(11)
    used = 0
    for _ in range(20):
        xs = regime(rng, 1000)
        plain, first = ar1_variance(xs), first_level(xs)
        assert plain is not None and first is not None
        used += first[0] > 3.0 * plain[0]
    assert used >= 16, used


def test_independent_and_ar1_values_stay_on_the_ar1() -> None:
    """The gate (lags 2–5 beyond what lag 1 implies) keeps the power of plain series: the AR(1)
    under noise takes over in only a few of them (each one by chance), and then by little."""
    rng = random.Random(12)
    for phi in (0.0, 0.5, 0.9):
        taken = 0
        for _ in range(40):
            xs = ar1(rng, 300, phi)
            plain, first = ar1_variance(xs), first_level(xs)
            assert plain is not None and first is not None
            taken += first[0] > plain[0]
        assert taken <= 6, (phi, taken)


def test_the_level_stability_check_still_uses_the_short_memory_noise() -> None:
    """A step from 2.2 to 2.8 halfway through 300 lines: whatever level 1 makes of it, the CUSUM
    is measured against the plain AR(1) (``short``), so the step is still seen as a step."""
    rng = random.Random(13)
    xs = [(2.2 if i < 150 else 2.8) + rng.gauss(0.0, 0.3) for i in range(300)]
    r = long_run_variance(xs)
    plain = ar1_variance(xs)
    assert r is not None and plain is not None
    assert r.short == plain[0]
