"""The fleet view's pieces without a Prometheus: the PromQL built from each family's series, the
counter steps (resets by drops and by ``_created``), the rows' flags, and the canary verdict's
calibration (instances as the unit; seeded)."""

from __future__ import annotations

import math
import random

import pytest

from tui.core.fleet import query as q
from tui.core.fleet.fetch import fleet_families
from tui.core.fleet.groups import group_estimate, welch
from tui.core.fleet.rows import Instance, counters_instance, flag
from tui.core.sources.prom.steps import increments, restart_steps
from tui.core.stats.pooled import RatioSeries


def test_every_counting_family_and_specwatch_export_have_fleet_series():
    fams = {n.family: n for n in fleet_families()}
    assert set(fams) == {"vllm", "sglang", "llamacpp", "trtllm", "specwatch"}
    for name in ("vllm", "llamacpp", "trtllm"):
        assert fams[name].kind == "counters" and fams[name].accepted and fams[name].drafts
    assert fams["sglang"].kind == "gauge" and fams["specwatch"].kind == "gauge"


def test_queries_are_per_family_and_quantity_grouped_by_instance():
    (vllm,) = [n for n in fleet_families() if n.family == "vllm"]
    qs = q.family_queries(vllm, 'job=~"vllm.*"', ["draft"])
    assert {x.quantity for x in qs} == {
        "accepted",
        "drafts",
        "draft_tokens",
        "gen_tokens",
        "running",
        "created",
    }
    acc = next(x for x in qs if x.quantity == "accepted").promql
    assert acc.startswith("sum by (instance, job, engine, draft, ")
    assert '{__name__="vllm:spec_decode_num_accepted_tokens_total", job=~"vllm.*"}' in acc
    (trt,) = [n for n in fleet_families() if n.family == "trtllm"]
    drafts = next(x for x in q.family_queries(trt, "", []) if x.quantity == "drafts").promql
    assert 'token_position="0"' in drafts


@pytest.mark.parametrize(
    ("text", "want"), [('{job="a"}', 'job="a"'), ('job="a", x=~"b.*"', 'job="a", x=~"b.*"'), ("", "")]
)
def test_selectors(text, want):
    assert q.matchers(text) == want


@pytest.mark.parametrize("text", ['up{job="a"}', '{job="a}', "{x"])
def test_bad_selectors(text):
    with pytest.raises(q.SelectorError):
        q.matchers(text)


def test_label_names_are_checked():
    with pytest.raises(q.SelectorError):
        q.labels_ok(["ok", "not ok"])


def test_steps_of_a_counter_with_a_drop_and_a_created_change():
    pts = [(0.0, 0.0), (1.0, 10.0), (2.0, 25.0), (3.0, 4.0), (4.0, 9.0)]
    inc, resets = increments(pts)
    assert inc == {1.0: 10.0, 2.0: 15.0, 3.0: 4.0, 4.0: 5.0} and resets == 1
    # a restart whose new count already exceeds the old one: only _created tells
    pts = [(0.0, 0.0), (1.0, 10.0), (2.0, 30.0)]
    created = [(0.0, 100.0), (1.0, 100.0), (2.0, 150.0)]
    assert restart_steps(created) == {2.0}
    assert increments(pts, restart_steps(created)) == ({1.0: 10.0, 2.0: 30.0}, 1)


def test_counters_instance_pools_exact_counts_and_leaves_idle_steps_out():
    acc = [(0.0, 0.0), (1.0, 30.0), (2.0, 30.0), (3.0, 75.0)]
    drafts = [(0.0, 0.0), (1.0, 20.0), (2.0, 20.0), (3.0, 50.0)]
    inst = counters_instance(
        "vllm", ("h:1", "j"), {"instance": "h:1", "job": "j"}, {"accepted": acc, "drafts": drafts}, 1.0
    )
    assert inst.accept_len == pytest.approx(1 + 75 / 50)
    assert inst.steps == [(1.0, 2.5), (2.0, None), (3.0, 2.5)]  # idle: no value, never 1.0 or 0
    flag(inst, 3.0, 1.0)
    assert inst.flags == []
    flag(inst, 10.0, 1.0)
    assert inst.flags[-1].startswith("stale (last sample 7 s ago")


def simulated(rng: random.Random, mean_al: float, spread: float, k: int = 3, steps: int = 40) -> Instance:
    """An instance: its own true accept len (servers differ by sd 0.08), its own load (lognormal
    ``spread`` between servers), per-step drafts lognormal, accepted tokens binomial (normal approx)."""
    al = mean_al + rng.gauss(0, 0.08)
    p = (al - 1) / k
    load = math.exp(rng.gauss(0, spread))
    nums, dens = [], []
    for _ in range(steps):
        d = max(1, int(rng.lognormvariate(math.log(20 * load), 0.5)))
        n = d * k
        a = min(n, max(0, round(rng.gauss(n * p, math.sqrt(n * p * (1 - p))))))
        nums.append(float(a))
        dens.append(float(d))
    inst = Instance("vllm", "counters", {}, ())
    r = RatioSeries(offset=1.0)
    r.add_many(nums, dens)
    inst.estimate, inst.accepted, inst.drafts = r.estimate(), math.fsum(nums), math.fsum(dens)
    return inst


@pytest.mark.parametrize(("m", "spread"), [(4, 0.3), (8, 1.0)])
def test_canary_a_a_is_no_difference_and_a_shift_is_found(m, spread):
    """400 seeded A/A pairs of groups of ``m`` servers: false verdicts at most 29 (7.25%: a
    calibrated 5% test exceeds it with probability < 2%); a +0.2 shift found in most pairs."""
    rng = random.Random(20261201 + m)
    verdicts = {"higher": 0, "lower": 0, "no_difference": 0, "insufficient": 0}
    for _ in range(400):
        a = group_estimate("a", [simulated(rng, 2.6, spread) for _ in range(m)])
        b = group_estimate("b", [simulated(rng, 2.6, spread) for _ in range(m)])
        verdicts[welch(a, b)["verdict"]] += 1
    assert verdicts["insufficient"] == 0
    assert verdicts["higher"] + verdicts["lower"] <= 29, verdicts
    found = 0
    for _ in range(100):
        a = group_estimate("a", [simulated(rng, 2.6, spread) for _ in range(m)])
        b = group_estimate("b", [simulated(rng, 2.8, spread) for _ in range(m)])
        found += welch(a, b)["verdict"] == "higher"
    assert found >= (80 if spread < 0.5 else 50), found


def test_one_server_per_group_is_insufficient():
    rng = random.Random(1)
    a = group_estimate("a", [simulated(rng, 2.6, 0.3)])
    b = group_estimate("b", [simulated(rng, 2.6, 0.3) for _ in range(3)])
    out = welch(a, b)
    assert out["verdict"] == "insufficient" and "need 2 instances" in out["reason"]


def loaded(rng: random.Random, load: float, shift: float = 0.0, k: int = 3, steps: int = 40) -> Instance:
    """An instance whose acceptance falls with its batch size (3.0 − 0.01 per running request), at
    its own load, with per-step counts and running requests. (A steeper fall leaves a bias inside
    the half-octave bins: docs/fleet.md.)"""
    inst = Instance("vllm", "counters", {}, ())
    nums, dens = [], []
    for _ in range(steps):
        running = max(1, round(rng.gauss(load, load * 0.3)))
        al = 3.0 - 0.01 * running + shift + rng.gauss(0, 0.05)
        p = min(0.99, max(0.01, (al - 1) / k))
        d = max(1, int(rng.lognormvariate(math.log(30), 0.4)))
        n = d * k
        a = min(n, max(0, round(rng.gauss(n * p, math.sqrt(n * p * (1 - p))))))
        nums.append(float(a))
        dens.append(float(d))
        inst.counts.append((float(a), float(d), float(running)))
    r = RatioSeries(offset=1.0)
    r.add_many(nums, dens)
    inst.estimate, inst.accepted, inst.drafts = r.estimate(), math.fsum(nums), math.fsum(dens)
    return inst


def test_the_load_adjusted_canary_removes_a_difference_of_load():
    """The canary runs lighter traffic (8 vs 20 running requests, overlapping): the raw verdict
    calls it higher, the verdict at equal batch size mostly not; a real +0.2 is still found."""
    from tui.core.fleet.canary import load_adjusted

    rng = random.Random(7)
    raw_higher = adj_false = adj_found = 0
    reps = 60
    for _ in range(reps):
        stable = [loaded(rng, 20) for _ in range(6)]
        canary = [loaded(rng, 12) for _ in range(6)]
        raw_higher += welch(group_estimate("s", stable), group_estimate("c", canary))["verdict"] == "higher"
        adj = load_adjusted(stable, canary)
        assert adj["strata"], adj["reason"]
        adj_false += adj["verdict"] in ("higher", "lower")
        better = [loaded(rng, 12, shift=0.2) for _ in range(6)]
        adj_found += load_adjusted(stable, better)["verdict"] == "higher"
    assert raw_higher >= 0.8 * reps  # the confounding the adjustment is for
    assert adj_false <= 8, adj_false  # at most ~13% of 60 (a calibrated 5% test exceeds it with p < 1%)
    assert adj_found >= 0.7 * reps, adj_found


def test_load_adjusted_needs_batch_sizes():
    from tui.core.fleet.canary import load_adjusted

    rng = random.Random(1)
    a = [simulated(rng, 2.6, 0.3) for _ in range(3)]  # no running requests exported
    out = load_adjusted(a, a)
    assert out["verdict"] == "insufficient" and "batch sizes" in out["reason"]
