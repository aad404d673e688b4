"""Alert hysteresis: a threshold rule resolves only once the value is back past the threshold by a
margin (``clear=LEVEL``, default the larger of 2% of the threshold and three autocorrelation-corrected
standard errors of the rolling mean), held for the resolve time. The realistic case (correlated
records, printed to 0.01, 1–2 s apart) through ``stream``: tests/integration/test_alert_flapping_cli.py.

The generated log: one SGLang decode line a second, accept len 2.0 plus independent Gaussian noise
of sd 0.1 a line (a line's accept len averages 40 decode steps of every running request), seeded.
Against ``accept_len<2.0 for 30s`` over 45 log-minutes at 2.0 (seed 0), the old semantics (the
margin 0: ``clear=2.0``) give 13 fire/resolve pairs; the default margin (here three standard
errors of about 0.02) gives one fire and no resolve, and one resolve once the level
moves to 2.5. Over seeds 0–39 the old semantics gave 9–22 pairs and the default 0 resolves in all
40 logs.
"""

from __future__ import annotations

import math
import random

import pytest

from tui.core.alerts.engine import AlertEngine, RuleError, ar1_stderr, block_stderr, parse_rule
from tui.core.alerts.rules import default_margin
from tui.core.formats import LineParser
from tui.core.model.records import Record

RULE = "accept_len<2.0 for 30s"
MINUTES = 45


def generated_log(seed: int, minutes: int = MINUTES, then: float | None = None) -> list[str]:
    """``minutes`` of SGLang decode lines at accept len 2.0 (one a second), then, when ``then`` is
    given, 5 minutes at that level."""
    rng = random.Random(seed)
    levels = [2.0] * (minutes * 60) + ([then] * 300 if then is not None else [])
    lines = []
    for i, level in enumerate(levels):
        al = min(4.0, max(1.0, level + rng.gauss(0.0, 0.1)))
        stamp = f"2026-11-20 {12 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}"
        lines.append(
            f"[{stamp}] Decode batch, #running-req: 8, #token: 900, token usage: 0.10, accept len: {al:.2f}, "
            f"accept rate: {(al - 1) / 3:.2f}, cuda graph: True, gen throughput (token/s): 300.00, "
            "#queue-req: 0\n"
        )
    return lines


def alerts_of(rule: str, lines: list[str]) -> list[tuple[float, str]]:
    """(time since the first line, state) of every alert ``rule`` raises on the parsed ``lines``."""
    parser = LineParser("a", year=2026, ref_time=None)
    engine = AlertEngine([parse_rule(rule)])
    got, t0 = [], None
    for n, line in enumerate(lines, 1):
        rec = parser.feed(line, n, 0)
        if not isinstance(rec, Record):
            continue
        assert rec.timestamp is not None
        t0 = rec.timestamp if t0 is None else t0
        got += [(a.time - t0, a.state) for a in engine.observe_record("a", rec)]
    return got


def test_a_level_at_the_threshold_fires_once_and_resolves_once_it_moves_clearly_above():
    got = alerts_of(RULE, generated_log(0, then=2.5))
    assert [s for _, s in got] == ["firing", "resolved"]
    rise = MINUTES * 60.0
    assert got[0][0] == 30.0  # the first full window
    assert rise + 30.0 <= got[1][0] <= rise + 90.0  # the mean past 2.04, then clear for 30 s


def test_a_level_that_stays_at_the_threshold_fires_once_and_never_resolves():
    assert [s for _, s in alerts_of(RULE, generated_log(0))] == ["firing"]


def test_without_a_margin_the_same_log_flaps():
    states = [s for _, s in alerts_of(RULE + " clear=2.0", generated_log(0))]
    assert states.count("resolved") == 13 and states.count("firing") in (13, 14)


def feed(
    engine: AlertEngine, values: list[float], start: float, metric: str = "accept_len"
) -> list[tuple[float, str]]:
    out = []
    for i, v in enumerate(values):
        out += [(start + i, a.state) for a in engine.observe("a", metric, v, start + i)]
    return out


def test_a_value_between_the_threshold_and_the_clear_level_keeps_it_firing():
    eng = AlertEngine([parse_rule("accept_len<2.0 clear=2.5")], rearm=30.0)
    assert feed(eng, [1.0], 0.0) == [(0.0, "firing")]
    assert feed(eng, [2.2] * 60, 1.0) == []  # past the threshold, short of 2.5: never resolves
    assert feed(eng, [2.6] * 20 + [2.3] + [2.6] * 40, 61.0) == [(112.0, "resolved")]  # 2.3 restarts it
    assert feed(eng, [1.9], 200.0) == [(200.0, "firing")]  # armed again


def test_a_greater_than_rule_clears_below_its_level():
    eng = AlertEngine([parse_rule("throughput>100 clear=80")], rearm=10.0)
    assert feed(eng, [150.0], 0.0, "throughput") == [(0.0, "firing")]
    assert feed(eng, [90.0] * 20, 1.0, "throughput") == []
    assert feed(eng, [80.0] * 11, 21.0, "throughput") == [(31.0, "resolved")]


def test_the_default_margin_is_the_larger_of_two_percent_and_the_standard_error():
    assert default_margin(2.0, 0.01) == pytest.approx(0.04)
    assert default_margin(2.0, 0.1) == pytest.approx(0.3)  # three standard errors
    assert parse_rule("accept_len<2.0").clear_level(0.0) == pytest.approx(2.04)
    assert parse_rule("accept_rate>=0.5").clear_level(0.05) == pytest.approx(0.35)
    assert parse_rule("accept_len<2.0 clear=2.3").clear_level(1.0) == 2.3
    # a noisy window: the standard error (sd / sqrt(n)) sets the margin
    eng = AlertEngine([parse_rule("accept_len<2.0 for 4s")], rearm=4.0)
    assert feed(eng, [1.0] * 5, 0.0) == [(4.0, "firing")]
    # means past 2.04 but within one standard error (about 0.16) of 2.0: still firing
    assert feed(eng, [1.9, 2.5, 1.8, 2.4] * 5, 5.0) == []


@pytest.mark.parametrize(
    "text, clear",
    [
        ("accept_len<2.0 for 30s clear=2.1", 2.1),
        ("accept_len <= 2 clear = 2", 2.0),
        ("throughput>100 for 1m clear=80", 80.0),
    ],
)
def test_parse_clear(text, clear):
    r = parse_rule(text)
    assert r.clear == clear and r.text == " ".join(text.split())


@pytest.mark.parametrize(
    "text, part",
    [
        ("accept_len<2.0 for 30s clear=1.9", "clear=1.9 must be at or above the threshold 2.0"),
        ("throughput>100 clear=120", "clear=120 must be at or below the threshold 100"),
        ("accept_len<2.0 clear=+0.1", "write the level itself (clear=2.1), not a margin"),
        ("accept_len<2.0 clear=abc", "'abc' is not a number"),
        ("accept_len<2.0 clear=inf", "must be a finite number"),
        ("accept_len<2.0 clear=", "write clear=NUMBER at the end"),
        ("accept_len<2.0 clear=2.1 for 30s", "write clear=NUMBER at the end"),
        ("drift clear=2", "clear= applies only to METRIC OP NUMBER rules"),
        ("verdict=lower clear=2", "clear= applies only to METRIC OP NUMBER rules"),
    ],
)
def test_parse_clear_bad(text, part):
    with pytest.raises(RuleError) as exc:
        parse_rule(text)
    msg = str(exc.value)
    assert part in msg and "\n" not in msg and msg.startswith(repr(" ".join(text.split())))


def test_verdict_and_drift_rules_have_no_clear_level():
    assert all(math.isnan(parse_rule(t).clear) for t in ("verdict=lower", "drift"))


def ar1_series(rng: random.Random, n: int, phi: float, sd: float = 0.1) -> list[float]:
    e = sd * math.sqrt(1 - phi * phi)
    x, out = rng.gauss(0.0, sd), []
    for _ in range(n):
        x = phi * x + rng.gauss(0.0, e)
        out.append(2.0 + x)
    return out


def true_se(phi: float, sd: float, n: int) -> float:
    """The standard error of the mean of n consecutive values of an AR(1) series."""
    f = (1 + phi) / (1 - phi) - 2 * phi * (1 - phi**n) / (n * (1 - phi) ** 2)
    return sd * math.sqrt(f / n)


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_the_standard_error_is_corrected_for_autocorrelation(phi):
    """The block estimate (60 window means) and the early AR(1) fit are near the true standard error
    of a 20-record mean, in the median over seeds; the plain sd/√n falls far short at φ = 0.9."""
    n, want = 20, true_se(phi, 0.1, 20)
    blocks, early, plain = [], [], []
    for seed in range(30):
        xs = ar1_series(random.Random(seed), 60 * n, phi)
        blocks.append(block_stderr([sum(xs[i : i + n]) / n for i in range(0, len(xs), n)]))
        early.append(ar1_stderr(xs[: 6 * n], n))
        w = xs[:n]
        m = sum(w) / n
        plain.append(math.sqrt(sum((x - m) ** 2 for x in w) / (n - 1) / n))
    med = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
    assert 0.8 * want < med(blocks) < 1.2 * want
    assert 0.8 * want < med(early) < 1.6 * want  # φ one standard error up: on the safe side
    if phi == 0.9:
        assert med(plain) < 0.3 * want


def test_a_level_shift_moves_the_block_estimate_little():
    blocks = [2.0 + 0.01 * (-1) ** i for i in range(30)] + [2.5 + 0.01 * (-1) ** i for i in range(30)]
    assert block_stderr(blocks) < 0.5 / 5  # two of 58 differences hold the shift
    assert block_stderr([2.0, 2.1]) == 0.0 and ar1_stderr([2.0] * 5, 20) == 0.0
