"""The variance floor at the print resolution (estimate.print_step, mean_estimate).

30 × 2.50 against 30 × 2.51 is ``no_difference``: values that are all equal carry only the
rounding of their print step, and a constant true value is rounded the same way in every line,
so the floor is 0.01²/12 with one degree of freedom (not divided by n); the interval of B − A is
about ±0.05 and contains 0. The sides still have ≥ 30 records, so it is not ``insufficient``.
"""

from __future__ import annotations

import random

from tui.core.stats import estimate
from tui.core.stats.compare import HIGHER, NO_DIFFERENCE, compare
from tui.core.stats.estimate import print_step
from tui.core.stats.series import Series


def _series(xs: list[float]) -> Series:
    s = Series()
    s.add_many(xs)
    return s


def test_equal_printed_values_are_not_called_different() -> None:
    c = compare(_series([2.50] * 30), _series([2.51] * 30))
    assert c.verdict == NO_DIFFERENCE
    assert c.ci95 is not None and c.ci95[0] < 0.0 < c.ci95[1]


def test_a_large_step_is_still_higher() -> None:
    c = compare(_series([2.50] * 300), _series([2.60] * 300))
    assert c.verdict == HIGHER


def test_one_by_one_equals_bulk() -> None:
    s = Series()
    for _ in range(30):
        s.add(2.5)
    assert s.estimate() == _series([2.5] * 30).estimate()
    assert s.estimate().se is not None and s.estimate().se > 0.0


def test_print_step() -> None:
    assert print_step([2.5, 2.51, 3.0]) == 0.01
    assert print_step([0.653, 0.7]) == 0.001
    assert print_step([2 / 3, 2.5]) == 0.0  # not printed decimals: no floor
    assert print_step([]) == float("inf")
    assert print_step([2.5, float("nan")]) == 0.01


def _ar1(rng: random.Random, n: int, phi: float, mu: float) -> list[float]:
    x, out = 0.0, []
    for _ in range(n):
        x = phi * x + rng.gauss(0.0, 0.3)
        out.append(round(mu + x, 2))
    return out


def test_floor_barely_touches_noisy_data(monkeypatch) -> None:
    rng = random.Random(21)
    for phi in (0.0, 0.5, 0.9):
        xs = _ar1(rng, 400, phi, 2.5)
        with_floor = _series(xs).halfwidth()
        monkeypatch.setattr(estimate, "PRINT_SCALES", ())
        without = _series(xs).halfwidth()
        monkeypatch.undo()
        assert with_floor is not None and without is not None
        assert without <= with_floor <= without * 1.001


def test_values_that_are_not_printed_decimals_get_no_floor() -> None:
    e = _series([2 / 3] * 30).estimate()  # e.g. a ratio of counts: exact, no rounding
    assert e.se is not None and e.se < 1e-9  # float noise of the batch sums only
    assert "print step" not in e.method


def test_the_finest_step_of_the_runs_wins() -> None:
    s = Series()
    s.add_many([2.5] * 20)
    s.add_many([2.505] * 20)
    assert s.estimate().se is not None
    coarse = _series([2.5] * 20 + [2.51] * 20).estimate().se
    fine = s.estimate().se
    assert coarse is not None and fine is not None and fine < coarse
