"""Calibration of intervals and verdicts under autocorrelation (seeded, pure Python).

Consecutive log lines are correlated (AR(1) with lag-1 autocorrelation φ here). Two logs of one
server must rarely be called different, 95% intervals must cover the true mean, and the data
must say "insufficient" rather than guess when it holds too few independent values.
"""

from __future__ import annotations

import io
import math
import random

import pytest

from tui.core.pipeline.whole import summarize_stream
from tui.core.stats import Series, compare
from tui.core.stats.estimate import MIN_INDEP
from tui.core.stats.verdicts import comparison


def ar1(rng: random.Random, n: int, mean: float, sd: float, phi: float, lo: float = 1.0, hi: float = 4.0):
    """Stationary AR(1) values (started from the stationary law), rounded and clipped like
    printed accept lengths."""
    x, out, innov = rng.gauss(0.0, sd), [], sd * math.sqrt(1.0 - phi * phi)
    for _ in range(n):
        out.append(min(hi, max(lo, round(mean + x, 2))))
        x = phi * x + rng.gauss(0.0, innov)
    return out


def sglang_log(values: list[float]) -> bytes:
    """A 2026 SGLang log (steps 3, topk 1: rate = (AL−1)/3) printing ``values`` as accept len."""
    lines = []
    for i, al in enumerate(values):
        s = 10 * i
        ts = f"2026-05-01 {10 + s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"
        lines.append(
            f"[{ts} TP0] Decode batch, #running-req: 8, #token: 4000, token usage: 0.10, "
            f"accept len: {al:.2f}, accept rate: {(al - 1) / 3:.2f}, cuda graph: True, "
            f"gen throughput (token/s): 250.00, #queue-req: 0, \n"
        )
    return "".join(lines).encode()


def verdict_of_logs(a: list[float], b: list[float]) -> dict:
    sa = summarize_stream(io.BytesIO(sglang_log(a)), "a").stats
    sb = summarize_stream(io.BytesIO(sglang_log(b)), "b").stats
    return comparison(sa, sb)["accept_len"]


@pytest.mark.parametrize("phi,n", [(0.9, 30), (0.9, 100), (0.5, 30)])
def test_same_server_is_rarely_called_different_at_small_n(phi, n):
    rng = random.Random(int(phi * 1000) + n)
    false = 0
    for _ in range(40):
        c = verdict_of_logs(ar1(rng, n, 2.5, 0.5, phi), ar1(rng, n, 2.5, 0.5, phi))
        false += c["verdict"] in ("higher", "lower")
        assert c["estimator"] == "mean_of_lines"
    assert false <= 4


def test_strong_correlation_says_insufficient_and_why():
    rng = random.Random(7)
    c = verdict_of_logs(ar1(rng, 30, 2.5, 0.5, 0.9), ar1(rng, 30, 2.5, 0.5, 0.9))
    assert c["verdict"] == "insufficient"
    assert "n=30 but consecutive values are strongly correlated" in c["reason"]
    assert "independent values; wait for ~" in c["reason"] and "more records" in c["reason"]


def test_a_shift_of_0_3_is_found_at_n_1000():
    rng = random.Random(2026)
    found = 0
    for _ in range(10):
        c = verdict_of_logs(ar1(rng, 1000, 2.5, 0.5, 0.5), ar1(rng, 1000, 2.8, 0.5, 0.5))
        found += c["verdict"] == "higher"
    assert found >= 9


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
@pytest.mark.parametrize("n", [30, 100])
def test_coverage_and_false_verdicts_over_the_grid(phi, n):
    """200 replications per cell: 95% CIs cover the true mean ≥ 93%, A/A pairs are called
    different ≤ 5%; a verdict is only given with ≥ MIN_INDEP independent values a side."""
    rng = random.Random(hash((phi, n)) & 0xFFFF)
    reps, covered, false = 200, 0, 0
    for _ in range(reps):
        a, b = Series(), Series()
        a.add_many(ar1(rng, n, 2.5, 0.5, phi, -math.inf, math.inf))
        b.add_many(ar1(rng, n, 2.5, 0.5, phi, -math.inf, math.inf))
        lo, hi = a.ci95()
        covered += lo <= 2.5 <= hi
        c = compare(a, b)
        false += c.verdict in ("higher", "lower")
        if c.verdict != "insufficient":
            assert a.estimate().ess >= MIN_INDEP and b.estimate().ess >= MIN_INDEP
    assert covered / reps >= 0.93
    assert false / reps <= 0.05


def test_effective_n_reflects_the_correlation():
    rng = random.Random(3)
    s = Series()
    s.add_many(ar1(rng, 2000, 2.5, 0.5, 0.8, -math.inf, math.inf))
    e = s.estimate()
    # AR(1): n·(1−φ)/(1+φ) = 2000·0.2/1.8 ≈ 222 independent values.
    assert 100 < e.ess < 400
    iid = Series()
    iid.add_many(ar1(rng, 2000, 2.5, 0.5, 0.0, -math.inf, math.inf))
    assert iid.estimate().ess > 1300


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_pooled_intervals_are_calibrated_too(phi):
    """Pooled 1 + Σaccepted/Σdrafts over lines of 50–600 drafts whose acceptance is AR(1)."""
    from tui.core.stats.pooled import RatioSeries

    rng = random.Random(int(phi * 10) + 77)

    def pooled(n: int) -> RatioSeries:
        r = RatioSeries(1.0)
        r.set_bounds(1.0, 4.0)
        al = ar1(rng, n, 2.5, 0.5, phi, 1.0, 4.0)
        drafts = [float(rng.randint(50, 600)) for _ in range(n)]
        r.add_many([round((a - 1) * d) for a, d in zip(al, drafts)], drafts)
        return r

    reps, covered, false = 200, 0, 0
    for _ in range(reps):
        a, b = pooled(100), pooled(100)
        lo, hi = a.estimate().ci95()
        covered += lo <= 2.5 <= hi
        false += compare(a, b).verdict in ("higher", "lower")
    assert covered / reps >= 0.93
    assert false / reps <= 0.05
