"""The fleet on the log statistics' code (issue 28, item 6): an instance's steps are the records
its own pane reads (:func:`tui.core.sources.prom.steps.step_records`), and they go through the
same checks, segments (a restart opens one), rate definition and diagnostics as a log's
records (:func:`tui.core.fleet.rows.shared_statistics`)."""

from __future__ import annotations

import asyncio
import io

import pytest
from _fleet_util import STEP, FakePrometheus

from tui.core.fleet.fetch import FleetQuery, fleet_families, refresh
from tui.core.fleet.report import fleet_dict, instance_dict, write_json
from tui.core.fleet.rows import counters_instance, flag, log_view
from tui.core.model.records import RATE_DRAFTS
from tui.core.model.sanitize import json_text
from tui.core.pipeline.follow import Followed
from tui.core.sources.base import LineBatch
from tui.core.sources.prom.api import PromAPI
from tui.core.sources.prom.history import PromHistorySource

LABELS = {"instance": "gpu1:8000", "job": "vllm", "engine": "0"}


def counters(
    acc_steps: list[float], dr_steps: list[float], k: int = 3, restart_at: int | None = None
) -> dict:
    """Raw counter values at steps 0, 1, 2… from per-step increments; from ``restart_at`` on the
    counters count from zero again (a new ``_created`` time)."""
    out: dict[str, list[tuple[float, float]]] = {
        "accepted": [],
        "drafts": [],
        "draft_tokens": [],
        "created": [],
    }
    a = d = 0.0
    for i, (x, y) in enumerate(zip([0.0, *acc_steps], [0.0, *dr_steps])):
        if restart_at is not None and i == restart_at:
            a = d = 0.0
        a, d = a + x, d + y
        out["accepted"].append((float(i), a))
        out["drafts"].append((float(i), d))
        out["draft_tokens"].append((float(i), k * d))
        out["created"].append((float(i), 100.0 if restart_at is None or i < restart_at else 200.0))
    return out


def pane_stats(series: dict) -> Followed:
    """The records the instance's pane reads (its history source) fed as the pane feeds them."""
    names = next(n for n in fleet_families() if n.family == "vllm")
    src = PromHistorySource("one", "http://prom.test", names, LABELS, step=1.0, follow=False)
    lines = src._records(series)
    drv = Followed("one")
    drv.feed(LineBatch("one", lines, list(range(len(lines))), 1, "http://prom.test", "metrics"))
    return drv


def test_a_row_has_the_segments_of_its_pane_a_restart_opening_one():
    acc = [20.0, 22.0, 18.0, 21.0, 19.0, 21.0, 18.0, 22.0, 20.0, 19.0]
    dr = [10.0] * 10
    series = counters(acc, dr, restart_at=6)
    inst = counters_instance("vllm", ("gpu1:8000", "vllm", "0"), LABELS, series, 1.0)
    assert inst.resets == 1
    view = log_view(inst)
    assert [s["reason"] for s in view["segments"]] == ["start", "counter_reset"]
    pane = [s for s in pane_stats(series).stats.segments if s.records]
    assert len(pane) == 2
    for mine, theirs in zip(view["segments"], pane):
        assert mine["records"] == theirs.records
        assert mine["accept_len"] == pytest.approx(theirs.all.pooled_len.value)
        assert mine["drafts"] == theirs.all.pooled_len.denominator
    # the window's value pools both segments: exact counts on either side of the restart
    assert inst.accept_len == pytest.approx(1 + sum(acc) / sum(dr))
    assert view["rate_definition"]["printed_definition"] == RATE_DRAFTS
    d = instance_dict(inst)
    assert d["segments"] == view["segments"] and d["refused"] is None


def test_a_step_the_checks_refuse_is_left_out_of_both_sums_and_said():
    acc = [20.0, 21.0, 1e300, 19.0, 20.0, 22.0]  # a counter glitch: no server accepts 1e300 tokens
    dr = [10.0] * 6
    series = counters(acc, dr)
    inst = counters_instance("vllm", ("gpu1:8000", "vllm", "0"), LABELS, series, 1.0)
    flag(inst, 6.0, 1.0)
    assert inst.refused_steps >= 1
    assert any("refused (values out of range)" in f for f in inst.flags)
    assert inst.estimate is not None and inst.estimate.value is not None
    assert inst.estimate.value < 4.0  # the glitch moved nothing
    assert instance_dict(inst)["refused"]["steps"] == inst.refused_steps
    assert any(x["code"] == "values_refused" for x in log_view(inst)["diagnostics"])


def test_no_draft_accepted_is_the_log_statistics_warning():
    series = counters([0.0] * 8, [10.0] * 8)
    inst = counters_instance("vllm", ("gpu1:8000", "vllm", "0"), LABELS, series, 1.0)
    flag(inst, 8.0, 1.0)
    assert any(f.endswith("no draft accepted") for f in inst.flags), inst.flags
    assert any(x["code"] == "accept_len_stuck_at_1" for x in log_view(inst)["diagnostics"])
    # a working server has no such warning; nor one that accepts again after a restart
    ok = counters_instance("vllm", ("gpu1:8000", "vllm", "0"), LABELS, counters([15.0] * 8, [10.0] * 8), 1.0)
    flag(ok, 8.0, 1.0)
    assert not any("no draft accepted" in f for f in ok.flags)
    back = counters([0.0] * 6 + [15.0] * 6, [10.0] * 12, restart_at=7)
    again = counters_instance("vllm", ("gpu1:8000", "vllm", "0"), LABELS, back, 1.0)
    flag(again, 12.0, 1.0)
    assert not any("no draft accepted" in f for f in again.flags), again.flags


def test_fleet_json_written_one_instance_at_a_time_is_the_whole_document():
    """``fleet --json`` writes instance by instance (bounded memory at 10,000): the same bytes as
    the document dumped whole, with and without instances; packed steps read back as lists."""

    async def fleet():
        api = PromAPI("http://prom.test:9090", transport=FakePrometheus(vllm=5, sglang=2).transport())
        try:
            return await refresh(api, FleetQuery(window=60 * STEP, step=STEP))
        finally:
            await api.aclose()

    f = asyncio.run(fleet())
    assert len(f.instances) == 7
    for instances in (f.instances, []):
        f.instances = instances
        buf = io.StringIO()
        write_json(f, buf)
        assert buf.getvalue() == json_text(fleet_dict(f), indent=2, allow_nan=False, default=str) + "\n"
    f2 = asyncio.run(fleet())
    row = fleet_dict(f2)["instances"][0]
    assert isinstance(row["trend"], list) and all(isinstance(x, list) and len(x) == 2 for x in row["trend"])
