"""Alerts see what the statistics see: values the statistics refuse (``1e308``, ``nan``, ``-1``,
``99`` accept len / rate) are skipped by the alert engine, so a log with such lines raises exactly
the alerts of the same log without them."""

from __future__ import annotations

import pytest
from _refused_util import generated_log

from tui.core.alerts.engine import AlertEngine, parse_rule
from tui.core.formats import LineParser
from tui.core.model.records import Record
from tui.core.stats.checks import admissible

RULES = ("accept_len<2.0 for 30s", "accept_len>50", "accept_len<1.2", "accept_rate>0.9", "drift")


def alerts_of(rule: str, lines: list[str]) -> list[tuple[str, str, float]]:
    """(rule, state, time) of every alert ``rule`` raises on the parsed ``lines``."""
    parser = LineParser("a", year=2026, ref_time=None)
    engine = AlertEngine([parse_rule(rule)])
    got = []
    for n, text in enumerate(lines, 1):
        rec = parser.feed(text, n, 0)
        if isinstance(rec, Record):
            got += [(a.rule, a.state, a.time) for a in engine.observe_record("a", rec)]
    return got


def test_the_bad_lines_reach_the_engine_as_refused_values():
    mixed, clean = generated_log(1)
    parser = LineParser("a", year=2026, ref_time=None)
    recs = [r for n, x in enumerate(mixed, 1) if isinstance(r := parser.feed(x, n, 0), Record)]
    refused = [r for r in recs if r.accept_len is not None and not admissible("accept_len", r.accept_len)]
    assert len(recs) == len(mixed) and len(refused) == len(mixed) - len(clean) == 60
    assert {repr(r.accept_len) for r in refused} == {"1e+308", "nan", "-1.0", "99.0"}


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("rule", RULES)
def test_alerts_with_refused_values_are_those_without_them(rule, seed):
    mixed, clean = generated_log(seed)
    expected = alerts_of(rule, clean)
    assert alerts_of(rule, mixed) == expected


@pytest.mark.parametrize("rule", ["accept_len<2.0 for 30s", "drift"])
def test_the_clean_log_fires_the_rules_that_bad_values_would_mask(rule):
    states = [s for _, s, _ in alerts_of(rule, generated_log(1)[1])]
    assert states[:1] == ["firing"]


def test_a_bound_from_the_records_own_depth():
    engine = AlertEngine([parse_rule("accept_len>3.5")])
    assert engine.observe("a", "accept_len", 3.8, 1.0, depth=2) == []  # above k + 1 = 3: refused
    assert [a.state for a in engine.observe("a", "accept_len", 3.8, 2.0, depth=3)] == ["firing"]
