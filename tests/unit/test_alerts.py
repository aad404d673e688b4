"""Alert rules: the parser (good and bad texts) and the engine's timing on a fake clock."""

from __future__ import annotations

import math
import random

import pytest

from tui.core.alerts.engine import AlertEngine, RuleError, parse_duration, parse_rule


@pytest.mark.parametrize(
    "text, kind, metric, op, threshold, duration, verdict",
    [
        ("accept_len<2.0 for 2m", "threshold", "accept_len", "<", 2.0, 120.0, ""),
        ("  accept_rate   >=  0.75 ", "threshold", "accept_rate", ">=", 0.75, 0.0, ""),
        ("throughput > 1e3 for 1.5h", "threshold", "throughput", ">", 1000.0, 5400.0, ""),
        ("accept_len <= 2 for 90s", "threshold", "accept_len", "<=", 2.0, 90.0, ""),
        ("verdict=lower", "verdict", "accept_len", "", math.nan, 0.0, "lower"),
        ("verdict == no_difference for 30s", "verdict", "accept_len", "", math.nan, 30.0, "no_difference"),
        ("drift", "drift", "accept_len", "", math.nan, 0.0, ""),
        ("drift accept_rate", "drift", "accept_rate", "", math.nan, 0.0, ""),
    ],
)
def test_parse_good(text, kind, metric, op, threshold, duration, verdict):
    r = parse_rule(text)
    assert (r.kind, r.metric, r.op, r.duration, r.verdict) == (kind, metric, op, duration, verdict)
    assert r.threshold == threshold or (math.isnan(r.threshold) and math.isnan(threshold))
    assert r.text == " ".join(text.split())


@pytest.mark.parametrize(
    "text, part",
    [
        ("", "empty"),
        ("accept_lenn<2", "unknown metric 'accept_lenn'"),
        ("accept_len=2", "unknown comparison '='"),
        ("accept_len<two", "'two' is not a number"),
        ("accept_len<nan", "finite"),
        ("accept_len<2 for 2x", "bad duration '2x'"),
        ("accept_len<2 for 0s", "more than 0"),
        ("accept_len<2 during 2m", "not a rule"),
        ("verdict=worse", "unknown verdict 'worse'"),
        ("verdict lower", "verdict=lower"),
        ("drift accept", "unknown metric 'accept' for drift"),
    ],
)
def test_parse_bad_names_the_part(text, part):
    with pytest.raises(RuleError) as exc:
        parse_rule(text)
    assert part in str(exc.value)


def test_duration():
    assert parse_duration("45s") == 45 and parse_duration("2m") == 120 and parse_duration("1h") == 3600


def feed(engine, values, start=0.0, step=1.0, source="a", metric="accept_len", segment=0):
    out = []
    for i, v in enumerate(values):
        out += [(start + i * step, a) for a in engine.observe(source, metric, v, start + i * step, segment)]
    return out


def test_for_duration_uses_the_rolling_mean_and_waits_for_a_full_window():
    eng = AlertEngine([parse_rule("accept_len<2.0 for 30s")])
    # low from the start: nothing before 30 s of watching
    got = feed(eng, [1.5] * 30)  # t = 0..29
    assert got == []
    got = feed(eng, [1.5], start=30.0)
    assert len(got) == 1
    t, a = got[0]
    assert (t, a.state, a.source, a.value, a.since) == (30.0, "firing", "a", 1.5, 0.0)
    assert "mean accept_len over 30s = 1.5" in a.message


def test_one_low_value_does_not_fire_a_for_rule():
    eng = AlertEngine([parse_rule("accept_len<2.0 for 30s")])
    vals = [3.0] * 60
    vals[45] = 0.5  # one dip: the 30 s mean stays well above 2
    assert feed(eng, vals) == []


def test_edge_triggered_then_resolved_then_rearmed():
    eng = AlertEngine([parse_rule("accept_len<2.0")], rearm=30.0)
    got = feed(eng, [1.0] * 10 + [3.0] * 10 + [1.0] * 5)  # flapping within the re-arm time
    assert [(t, a.state) for t, a in got] == [(0.0, "firing")]
    got = feed(eng, [3.0] * 40, start=25.0)  # clear from t = 25: resolved at 55
    assert [(t, a.state) for t, a in got] == [(55.0, "resolved")]
    assert got[0][1].value == 3.0 and "cleared" in got[0][1].message
    got = feed(eng, [1.0], start=70.0)  # armed again
    assert [(t, a.state) for t, a in got] == [(70.0, "firing")]


def test_gaps_are_not_zeros_and_sources_are_separate():
    eng = AlertEngine([parse_rule("accept_rate<0.5")])
    assert eng.observe("a", "accept_rate", None, 0.0) == []
    assert eng.observe("a", "accept_rate", math.nan, 1.0) == []
    assert eng.observe("a", "accept_len", 0.1, 2.0) == []  # another metric
    [a] = eng.observe("b", "accept_rate", 0.2, 3.0)
    assert a.source == "b"


def test_per_source_rules_only_apply_to_their_source():
    eng = AlertEngine([], {"fixed": [parse_rule("throughput<10")]})
    assert eng.observe("broken", "throughput", 1.0, 0.0) == []
    assert len(eng.observe("fixed", "throughput", 1.0, 0.0)) == 1
    assert eng.wants("fixed") == {"throughput"} and eng.wants("broken") == set()


def test_new_segment_restarts_the_window():
    eng = AlertEngine([parse_rule("accept_len<2.0 for 10s")])
    assert feed(eng, [1.0] * 8) == []
    assert feed(eng, [1.0] * 8, start=8.0, segment=1) == []  # restart at t=8: window starts again
    got = feed(eng, [1.0] * 3, start=16.0, segment=1)
    assert [t for t, _ in got] == [18.0]


def test_clock_going_back_starts_over():
    eng = AlertEngine([parse_rule("accept_len<2.0 for 10s")])
    assert feed(eng, [1.0] * 8, start=100.0) == []
    assert feed(eng, [1.0] * 8, start=0.0) == []


def test_verdict_rule_fires_on_change_and_resolves_when_it_changes_back():
    eng = AlertEngine([parse_rule("verdict=lower for 10s")])
    assert eng.verdict("A", "B", "insufficient", 0.0) == []
    assert eng.verdict("A", "B", "lower", 5.0) == []
    assert eng.verdict("A", "B", "lower", 14.0) == []
    [a] = eng.verdict("A", "B", "lower", 15.0)
    assert (a.source, a.value, a.since, a.state) == ("A → B", "lower", 5.0, "firing")
    assert eng.verdict("A", "B", "lower", 20.0) == []
    [r] = eng.verdict("A", "B", "no_difference", 21.0)
    assert r.state == "resolved"


def test_drift_fires_once_with_a_suggestion_and_a_new_segment_resolves_it():
    eng = AlertEngine([parse_rule("drift")])
    rng = random.Random(3)
    vals = [3.0 + rng.gauss(0, 0.3) for _ in range(800)] + [2.6 + rng.gauss(0, 0.3) for _ in range(800)]
    got = feed(eng, vals)
    assert len(got) == 1
    t, a = got[0]
    assert 800 < t < 1300 and a.suggest == "new_segment" and "drifted down" in a.message
    assert 2.5 < a.value < 2.8  # the mean after the estimated change (a little of before in it)
    assert 600 <= a.since <= 900  # the estimated start of the new level (it began at t = 800)
    [r] = eng.observe("a", "accept_len", 2.5, 2000.0, segment=1)
    assert r.state == "resolved"
