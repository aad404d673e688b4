"""The quantity registry (tui/core/model/quantities.py): the column layout, the checks' ranges and
the native reduction's layout are all derived from it, and a quantity registered later is
carried, checked and reduced like the built-in ones."""

from __future__ import annotations

import math
from array import array

import pytest

from tests._native_util import require_native
from tui.core.model import quantities as Q
from tui.core.model.columns import NUMERIC_FIELDS, RecordColumns
from tui.core.stats import checks
from tui.core.stats import precompute as P

NAN = math.nan


def test_the_layout_is_the_registry_in_order() -> None:
    assert Q.column_names() == NUMERIC_FIELDS
    assert NUMERIC_FIELDS[:3] == ("timestamp", "accept_len", "accept_rate")
    assert checks.ranges() == {q.name: q.valid for q in Q.checked()}
    assert checks.ranges()["accept_len"] == (1.0, Q.MAX_DEPTH + 1.0)
    assert checks.words("running_req") == "#running-req"
    assert all(Q.get(name).valid is None for name in ("tokens", "token_usage", "queue_req", "elapsed"))


def test_a_definition_is_checked_when_registered() -> None:
    with pytest.raises(ValueError):
        Q.Quantity("bad name", "", "x", "x", "x", Q.Combine.MEAN)
    with pytest.raises(ValueError):
        Q.Quantity("x", "", "x", "x", "x", Q.Combine.MEAN, valid=(2.0, 1.0))
    with pytest.raises(ValueError):
        Q.Quantity("x", "", "x", "x", "x", Q.Combine.MEAN, csv="x")  # a CSV column not shown in the CSV
    with pytest.raises(ValueError):
        Q.register(Q.Quantity("accept_len", "", "other", "o", "o", Q.Combine.MEAN))
    with pytest.raises(ValueError):
        Q.unregister("accept_len")


LATENCY = Q.Quantity(
    "draft_latency_ms",
    "ms",
    "draft latency",
    "lat",
    "time the draft model took per step",
    Q.Combine.NONE,  # checked and carried, not a series (see the last test for one)
    valid=(0.0, 1e6),
)


@pytest.fixture
def latency():
    Q.register(LATENCY)
    try:
        yield LATENCY
    finally:
        Q.unregister(LATENCY.name)


def _run(n: int, latency: list[float] | None) -> RecordColumns:
    values = {f: array("d", [NAN] * n) for f in NUMERIC_FIELDS}
    values["accept_len"] = array("d", [2.0 + (i % 3) / 4 for i in range(n)])
    values["running_req"] = array("d", [float(1 + i % 7) for i in range(n)])
    if latency is not None:
        values["draft_latency_ms"] = array("d", latency)
    return RecordColumns("sglang", "decode", n, values, line_nos=array("q", range(1, n + 1)), lines=n)


def test_a_registered_quantity_joins_the_end_of_the_layout_and_is_checked(latency) -> None:
    assert Q.column_names() == (*NUMERIC_FIELDS, "draft_latency_ms")
    assert checks.ranges()["draft_latency_ms"] == (0.0, 1e6)
    assert Q.added()[-1:] == (latency,)
    _, refused, full = checks.clean(_run(5, [3.0, -1.0, 4.0, math.inf, 5.0]), None)
    assert refused.out_of_range == {"draft_latency_ms": 1} and refused.nonfinite == {"draft_latency_ms": 1}
    assert refused.example is not None and refused.example["line"] == 2
    assert "draft latency out of range" in refused.message()
    _, refused, full = checks.clean(_run(3, [3.0, 4.0, 5.0]), None)
    assert not refused.total() and full["draft_latency_ms"] == (3.0, 5.0)
    # a run read before the quantity was registered has no such column: not printed, never zero
    _, refused, full = checks.clean(_run(3, None), None)
    assert not refused.total() and "draft_latency_ms" not in full


def test_the_native_reduction_takes_the_layout_from_the_registry(latency) -> None:
    if P._native is None:
        require_native("the native reduction")
    for lat in ([3.0, 4.0, 5.0, 6.0], None):
        rc = _run(4, lat)
        native, python = P._native_precompute(rc, False), P._python_precompute(rc, False)
        assert native is not None and python is not None
        assert native.full == python.full
        assert (native.full.get("draft_latency_ms") is not None) == (lat is not None)
        assert native.prepared.chunks["accept_len"].sum == python.prepared.chunks["accept_len"].sum
    # a value out of its range: not the common form, left to the Python code (which refuses it)
    assert P._native_precompute(_run(4, [3.0, -4.0, 5.0, 6.0]), False) is None


def test_an_added_series_is_reduced_by_the_python_code() -> None:
    import dataclasses

    q = dataclasses.replace(LATENCY, combine=Q.Combine.MEAN)
    Q.register(q)
    try:
        rc = _run(4, [3.0, 4.0, 5.0, 6.0])
        assert P._native_precompute(rc, False) is None  # the native code has the built-in series only
        pre = P._python_precompute(rc, False)
        assert pre is not None
        chunk = pre.prepared.chunks["draft_latency_ms"]
        assert chunk is not None and chunk.n == 4 and chunk.sum == 18.0
        if P._native is not None:  # nothing printed: the native code again
            assert P._native_precompute(_run(4, None), False) is not None
    finally:
        Q.unregister(q.name)
