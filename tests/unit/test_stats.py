"""Streaming statistics, rate definitions and the A/B verdict."""

from __future__ import annotations

import calendar
import math
import random
import statistics

import pytest
from _hypothesis_util import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.core.formats.sglang.rates import RATE_SGLANG_AL_OVER_NDT, infer_sglang
from tui.core.model.records import RATE_DRAFTS
from tui.core.stats import Series, compare
from tui.core.stats.estimate import UNITS
from tui.core.stats.series import ColumnChunk
from tui.core.stats.tdist import t975, t_ppf


def ar1(rng: random.Random, n: int, mean: float, sd: float, phi: float) -> list[float]:
    """Autocorrelated values rounded to 2 decimals, like consecutive accept len intervals."""
    x, out, innov = 0.0, [], sd * math.sqrt(1 - phi * phi)
    for _ in range(n):
        x = phi * x + rng.gauss(0, innov)
        out.append(round(mean + x, 2))
    return out


def test_t_quantiles_match_tables():
    table = {1: 12.706, 2: 4.303, 5: 2.571, 10: 2.228, 30: 2.042, 120: 1.980}
    for df, q in table.items():
        assert t975(df) == pytest.approx(q, abs=1e-3)
    assert t_ppf(0.025, 7) == pytest.approx(-t_ppf(0.975, 7))
    assert t_ppf(0.975, 1e7) == pytest.approx(1.95996, abs=1e-4)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1, max_size=300),
    st.integers(min_value=1, max_value=7),
)
def test_series_matches_textbook_values(xs, pieces):
    s = Series()
    size = max(1, len(xs) // pieces)
    for i in range(0, len(xs), size):  # any mix of single adds and bulk adds gives the same result
        chunk = xs[i : i + size]
        if len(chunk) % 2:
            for x in chunk:
                s.add(x)
        else:
            s.add_many(chunk)
    assert s.n == len(xs)
    assert s.mean == pytest.approx(math.fsum(xs) / len(xs), rel=1e-9, abs=1e-6)
    assert (s.min, s.max, s.first, s.last) == (min(xs), max(xs), xs[0], xs[-1])
    if len(xs) > 1:
        assert s.std == pytest.approx(statistics.stdev(xs), rel=1e-6, abs=1e-3)
    assert list(s.window) == xs[-s.window.maxlen :]


def test_bulk_and_single_adds_agree_exactly_on_batches_and_ewma():
    rng = random.Random(3)
    xs = ar1(rng, 5000, 2.4, 0.3, 0.6)
    ws = [float(rng.randint(1, 64)) for _ in xs]
    one, bulk = Series(), Series()
    for x, w in zip(xs, ws):
        one.add(x, w)
    for i in range(0, len(xs), 737):
        bulk.merge_chunk(ColumnChunk.of(xs[i : i + 737], ws[i : i + 737]))
    assert bulk.n == one.n and bulk.mean == pytest.approx(one.mean, rel=1e-12)
    assert bulk.weighted_mean == pytest.approx(one.weighted_mean, rel=1e-12)
    assert bulk.ewma == pytest.approx(one.ewma, rel=1e-12)
    assert bulk.ci95() == pytest.approx(one.ci95(), rel=1e-9)
    assert bulk.ci_method() == one.ci_method()
    assert UNITS // 2 <= one._bm.count < UNITS


def test_weighted_mean_and_nonfinite_values():
    s = Series()
    s.add(2.0, 1)
    s.add(4.0, 3)
    s.add(float("nan"), 5)
    s.add(float("inf"))
    assert s.weighted_mean == pytest.approx(3.5)
    assert s.n == 2 and s.nonfinite == 2
    assert Series().mean is None and Series().ci95() is None  # no data: no number, not zero


def test_ci_covers_the_true_mean_of_autocorrelated_data():
    rng = random.Random(11)
    covered = 0
    trials = 300
    for _ in range(trials):
        s = Series()
        s.add_many(ar1(rng, 2000, 2.5, 0.4, 0.7))
        lo, hi = s.ci95()
        covered += lo <= 2.5 <= hi
    # A naive s/sqrt(n) interval covers only ~60% here (the effective n is 2000*(1-0.7)/(1+0.7)).
    assert covered / trials >= 0.92


def test_same_distribution_gives_no_difference_at_least_95_percent():
    rng = random.Random(2024)
    trials = 400
    verdicts = {"no_difference": 0, "higher": 0, "lower": 0, "insufficient": 0}
    for _ in range(trials):
        a, b = Series(), Series()
        a.add_many(ar1(rng, 1500, 2.3, 0.4, 0.5))
        b.add_many(ar1(rng, 1500, 2.3, 0.4, 0.5))
        verdicts[compare(a, b).verdict] += 1
    assert verdicts["insufficient"] == 0
    assert verdicts["no_difference"] / trials >= 0.95, verdicts


@pytest.mark.parametrize("delta,expected", [(0.2, "higher"), (-0.2, "lower")])
def test_real_difference_of_0_2_is_found(delta, expected):
    rng = random.Random(99)
    for _ in range(100):
        a, b = Series(), Series()
        a.add_many(ar1(rng, 1500, 2.3, 0.4, 0.5))
        b.add_many(ar1(rng, 1500, 2.3 + delta, 0.4, 0.5))
        c = compare(a, b)
        assert c.verdict == expected, c
        assert c.ci95[0] <= c.diff <= c.ci95[1]
        assert c.diff == pytest.approx(delta, abs=0.1)


def test_too_few_records_is_insufficient():
    a, b = Series(), Series()
    a.add_many([2.0, 2.1, 2.2] * 5)
    b.add_many([3.0, 3.1, 3.2] * 5)
    c = compare(a, b)
    assert c.verdict == "insufficient" and "at least" in c.reason
    assert c.diff == pytest.approx(1.0)


# Rate definitions (docs/formats.md, "What the rate means") -------------------------------------------------------------
def test_rate_definition_from_config_and_values():
    # 2026 formula, steps 3 topk 1 (ndt forced to 4): rate = (AL-1)/3.
    pairs = [(al, round((al - 1) / 3, 2)) for al in (2.17, 2.5, 3.05, 1.0, 3.99)]
    rd = infer_sglang(pairs, 3, 4)
    assert (rd.definition, rd.drafts_per_step, rd.consistent) == (RATE_DRAFTS, 3, 5)
    # Nov 2025 formula: AL/ndt.
    pairs = [(al, round(al / 4, 2)) for al in (2.17, 2.5, 3.05, 1.0, 3.99)]
    rd = infer_sglang(pairs, 3, 4)
    assert rd.definition == RATE_SGLANG_AL_OVER_NDT and rd.drafts_per_step == 3
    # No config: denominators read off the values (the reference's own checks).
    assert infer_sglang([(3.05, 0.68), (2.63, 0.54), (2.83, 0.61)], None, None).drafts_per_step == 3
    # One pair can fit two formulas: 3.55/0.51 -> (AL-1)/5 or AL/7. Said so, not guessed...
    ambiguous = infer_sglang([(3.55, 0.51)], None, None)
    assert ambiguous.definition is None and "several" in ambiguous.note
    # ...unless the date rules one out: before 2026-04-23 the drafts-only formula did not exist.
    jan = calendar.timegm((2026, 1, 10, 0, 0, 0))
    assert infer_sglang([(3.55, 0.51)], None, None, jan).definition == RATE_SGLANG_AL_OVER_NDT
    assert infer_sglang([(4.00, 0.80)], None, None).definition == RATE_SGLANG_AL_OVER_NDT  # NGRAM, 5 tokens
    # A tree (steps 5, topk 4, ndt 8): the 2026 rate cannot reach 1.
    rd = infer_sglang([(6.0, round(5 / 7, 2)), (3.0, round(2 / 7, 2))], 5, 8)
    assert rd.definition == RATE_DRAFTS and rd.drafts_per_step == 7
