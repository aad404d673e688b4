"""The load-adjusted A/B and the throughput ratio in ``specwatch summary --json`` (the CLI as a subprocess)."""

from __future__ import annotations

import math
import random

import pytest
from _cli_util import summary_json
from _load_util import mostly, throughput_log, write_log


def test_same_curve_at_different_load_is_no_difference_once_adjusted(tmp_path):
    rng = random.Random(1)
    a = write_log(tmp_path / "a.log", mostly(rng, 1, 3, 1500), 0.0, 2)
    b = write_log(tmp_path / "b.log", mostly(rng, 40, 60, 1500), 0.0, 3)
    d = summary_json(f"A={a}", f"B={b}")
    c = d["comparison"]
    assert c["accept_len"]["verdict"] == "lower"
    adj = c["accept_len_load_adjusted"]
    assert adj["verdict"] == "no_difference", adj
    lo, hi = adj["ci95"]
    assert lo < 0 < hi and len(adj["strata"]) >= 3
    assert math.isclose(sum(s["weight"] for s in adj["strata"]), 1.0)
    assert adj["load"]["ratio"] > 5 and "× A's batch size" in adj["load"]["note"]
    for src in d["sources"]:
        strata = src["segments"][-1]["by_batch_size"]
        assert strata and all(s["n"] >= 30 for s in strata)
        assert sum(s["n"] for s in strata) == src["segments"][-1]["records"]
        ends = [s["running_req"] for s in strata]
        assert all(x[1] < y[0] for x, y in zip(ends, ends[1:]))  # disjoint, in order


def test_throughput_ratio_against_a_labelled_baseline(tmp_path):
    base = throughput_log(tmp_path / "base.log", None, 1000.0, 13)
    spec = throughput_log(tmp_path / "spec.log", 2.5, 1500.0, 14)
    t = summary_json(f"eagle={spec}", f"baseline={base}")["comparison"]["throughput"]
    assert t["baseline"] == "b" and t["formula"] == "A / B"
    assert t["ratio"] == pytest.approx(1.5, rel=0.02)
    lo, hi = t["ci95"]
    assert 1.0 < lo < 1.5 < hi and t["verdict"] == "higher"
