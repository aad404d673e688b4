"""The native reduction (tui/core/stats/_reduce.c) gives what the Python reduction gives, bit
for bit, or declines (None) and leaves the run to the Python code.

Runs are generated in the common form (every column printed on every record or on none, values
within bounds, positive weights) and in the forms the native code must decline (a value missing
on some records, out of bounds, accepted > drafted, a zero weight, a rate above 1, mixed k).
Real and sample logs are reduced both ways too, and a whole ``summary`` gives the same JSON with
and without the native code.
"""

from __future__ import annotations

import json
import math
import random
from array import array
from pathlib import Path

import pytest
from _hypothesis_util import examples
from _native_util import require_native
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.core.formats.fastscan import scan_chunk
from tui.core.model.columns import NUMERIC_FIELDS, RecordColumns
from tui.core.pipeline.chunks import iter_chunks, prepare
from tui.core.stats import precompute as P
from tui.core.stats.pooled import RatioChunk
from tui.core.stats.series import ColumnChunk

ROOT = Path(__file__).parent.resolve().parent.parent
SAMPLES = sorted((ROOT / "sample_logs").glob("*.log"))
REAL = sorted((ROOT / "tests" / "fixtures" / "real_logs").glob("*"))  # kept in the repository

if P._native is None:  # CI builds it: a missing build fails there (unless SPECWATCH_NATIVE=0)
    require_native("the native reduction")
NAN = math.nan


def same(a: object, b: object, path: str = "") -> None:
    """Equal, floats bit for bit (NaN equal to NaN, 0.0 not equal to -0.0)."""
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, float) and isinstance(b, float), f"{path}: {a!r} vs {b!r}"
        assert (a != a and b != b) or (a == b and math.copysign(1, a) == math.copysign(1, b)), (
            f"{path}: {a!r} vs {b!r}"
        )
    elif isinstance(a, (ColumnChunk, RatioChunk)):
        assert type(a) is type(b), path
        for k in type(a).__slots__:
            same(getattr(a, k), getattr(b, k), f"{path}.{k}")
    elif isinstance(a, (list, tuple, array)):
        assert isinstance(b, (list, tuple, array)) and len(a) == len(b), f"{path}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), f"{path}: keys {list(a)} vs {list(b)}"
        for k in a:
            same(a[k], b[k], f"{path}[{k!r}]")
    elif hasattr(a, "__dataclass_fields__"):
        assert type(a) is type(b), path
        for k in a.__dataclass_fields__:
            same(getattr(a, k), getattr(b, k), f"{path}.{k}")
    else:
        assert a == b, f"{path}: {a!r} vs {b!r}"


def both(rc: RecordColumns) -> tuple[P.Precomputed | None, P.Precomputed | None]:
    free = P.depth_free(rc)
    return P._native_precompute(rc, free), P._python_precompute(rc, free)


def columns(family: str, n: int, vals: dict[str, list[float]], ranks=None, pp=None) -> RecordColumns:
    values = {f: array("d", vals.get(f, [NAN] * n)) for f in NUMERIC_FIELDS}
    kind = "decode" if family == "sglang" else "spec"
    rate_def = None if family == "sglang" else "drafts"
    return RecordColumns(family, kind, n, values, ranks, pp, rate_def, False, array("q", range(1, n + 1)), n)


# -- generated runs ------------------------------------------------------------------------------
# Hypothesis draws the shape of a run (its length, k, which columns, which value is spoilt) and a
# seed; the hundreds of values in its columns come from a Random with that seed, each within the
# bounds a per-value draw would use, at the ends of them now and then (drawing every value through
# Hypothesis cost seconds per test and bought no other case).


class Values:
    """Integers in [lo, hi] from a seeded Random, one in 16 at an end of the range."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def __call__(self, lo: int, hi: int) -> int:
        r = self.rng.random()
        if r < 1 / 32:
            return lo
        if r < 1 / 16:
            return hi
        return self.rng.randint(lo, hi)


seeds = st.integers(0, 2**32 - 1)


@st.composite
def sglang_run(draw, common: bool = True):
    n = draw(st.integers(1, 520))
    big = draw(st.booleans())  # values large and close: the shifted second moment
    base = 1e7 if big else 0.0
    v = Values(draw(seeds))
    run = [float(v(1, 300)) for _ in range(n)]
    vals = {
        "timestamp": [1.77e9 + i for i in range(n)],
        "accept_len": [v(100, 6500) / 100 for _ in range(n)],
        "accept_rate": [v(0, 100) / 100 for _ in range(n)],
        "running_req": run,
        "throughput": [base + v(0, 10**6) / 100 for _ in range(n)],
        "tokens": [float(i) for i in range(n)],
    }
    tags = draw(
        st.lists(
            st.sampled_from(["TP0", "DP0 TP0", "DP1 TP1", "DP2 TP2"]), min_size=1, max_size=3, unique=True
        )
    )
    ranks = [tags[v(0, len(tags) - 1)] for _ in range(n)]
    if not common:
        _spoil(draw, vals, n, ["accept_len", "accept_rate", "running_req", "throughput"])
    return columns("sglang", n, vals, ranks)


@st.composite
def vllm_run(draw, common: bool = True):
    n = draw(st.integers(1, 520))
    k = draw(st.integers(1, 6))
    v = Values(draw(seeds))
    drafts = [float(v(1, 400)) for _ in range(n)]
    drafted = [d * k for d in drafts]
    accepted = [float(v(0, int(d))) for d in drafted]
    pp = [tuple(v(0, 1000) / 1000 for _ in range(k)) for _ in range(n)]
    vals = {
        "timestamp": [1.77e9 + 10 * i + v(0, 9) / 10 for i in range(n)],
        "accept_len": [1 + a / d for a, d in zip(accepted, drafts)],
        "accepted": accepted,
        "drafted": drafted,
        "num_drafts": drafts,
        "running_req": [float(v(0, 70000)) for _ in range(n)],
        "throughput": [v(0, 10**6) / 100 for _ in range(n)],
    }
    if draw(st.booleans()):
        vals["accept_rate"] = [a / d for a, d in zip(accepted, drafted)]
    ranks = ["engine 0"] * n if draw(st.booleans()) else None
    if not common:
        _spoil(draw, vals, n, ["accept_len", "accepted", "num_drafts", "running_req", "accept_rate"])
        if draw(st.booleans()):
            i = draw(st.integers(0, n - 1))
            pp[i] = draw(st.sampled_from([pp[i] + (0.5,), (1.5,) * k, ()]))
    return columns("vllm", n, vals, ranks, pp)


@st.composite
def counts_run(draw, common: bool = True):
    """A family whose lines print accepted and drafted tokens but no drafts count (llama.cpp's
    per-request lines, a family defined only by data): the weights of its means, and the drafts
    of its pooled length, printed on no record. Drafted tokens, the means and the batch sizes
    each printed or not."""
    n = draw(st.integers(1, 520))
    v = Values(draw(seeds))
    drafted = [float(v(1, 900)) for _ in range(n)]
    accepted = [float(v(0, int(d))) for d in drafted]
    vals: dict[str, list[float]] = {"accepted": accepted}
    if draw(st.booleans()):
        vals["drafted"] = drafted
    if draw(st.booleans()):
        vals["accept_len"] = [v(100, 1100) / 100 for _ in range(n)]
    if draw(st.booleans()):
        vals["accept_rate"] = [a / d for a, d in zip(accepted, drafted)]
    if draw(st.booleans()):
        vals["running_req"] = [float(v(1, 64)) for _ in range(n)]
    if draw(st.booleans()):
        vals["timestamp"] = [1.77e9 + i for i in range(n)]
    family = draw(st.sampled_from(["llamacpp", "vllm"]))  # drafts completed from k, or never
    if not common:
        _spoil(draw, vals, n, list(vals))
    return columns(family, n, vals)


def _spoil(draw, vals: dict[str, list[float]], n: int, names: list[str]) -> None:
    """One value of one column made what the common form excludes."""
    name = draw(st.sampled_from([x for x in names if x in vals]))
    i = draw(st.integers(0, n - 1))
    vals[name][i] = draw(st.sampled_from([NAN, math.inf, -1.0, 0.0, 1e300, 99.0]))


SETTINGS = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.one_of(sglang_run(), vllm_run(), counts_run()))
def test_common_runs_reduce_natively_to_the_same_result(rc):
    """(Runs without a drafts count, counts_run, fell to the Python reduction until 2026-12-04:
    a new family's lines, llama.cpp's.)"""
    native, python = both(rc)
    assert python is not None
    assert native is not None, "a run in the common form was declined"
    same(native, python)


@SETTINGS
@given(st.one_of(sglang_run(common=False), vllm_run(common=False), counts_run(common=False)))
def test_other_runs_are_declined_or_reduced_the_same(rc):
    native, python = both(rc)
    if native is not None:
        assert python is not None
        same(native, python)


def test_odd_forms_are_declined():
    n = 40
    base = {
        "timestamp": [1.77e9 + i for i in range(n)],
        "accept_len": [2.0] * n,
        "accept_rate": [0.5] * n,
        "running_req": [8.0] * n,
        "throughput": [100.0] * n,
    }
    assert both(columns("sglang", n, base, ["TP0"] * n))[0] is not None
    for name, value in [
        ("accept_len", NAN),  # printed on some records only
        ("accept_len", 70.0),  # beyond any depth
        ("accept_rate", 1.5),
        ("running_req", 0.0),  # a zero weight
        ("throughput", math.inf),
    ]:
        vals = {k: list(v) for k, v in base.items()}
        vals[name][7] = value
        native, _ = both(columns("sglang", n, vals, ["TP0"] * n))
        assert native is None, (name, value)
    vals = {k: list(v) for k, v in base.items()}  # a record without a rank tag
    assert both(columns("sglang", n, vals, ["TP0"] * (n - 1) + [None]))[0] is None


# -- real lines ----------------------------------------------------------------------------------
def runs_of(path: Path):
    with open(path, "rb") as f:
        for _, buf in iter_chunks(f, 1 << 16):
            sc = scan_chunk(buf, 2026)
            if sc is not None:
                yield from (rc for rc, _ in prepare(sc).runs)


@pytest.mark.parametrize("path", SAMPLES + REAL, ids=lambda p: p.name)
def test_logs_reduce_natively_to_the_same_result(path):
    compared = 0
    for rc in runs_of(path):
        if rc.n == 0:
            continue
        native, python = both(rc)
        if native is not None:
            same(native, python, path.name)
            compared += 1
    if path in SAMPLES:
        assert compared, "no run of a sample log took the native reduction"


@pytest.mark.parametrize("k", [None, 2, 4])
def test_a_segment_takes_a_reduction_made_without_it_only_where_its_k_changes_nothing(k):
    """A family whose missing drafts count is drafted tokens / k (vLLM's): its run without drafts
    is reduced natively ahead of the segment; a segment that knows no k takes that, one that
    knows k completes the drafts (and bounds accept len by k + 1) itself. The statistics are the
    same as the segment's own reduction's either way."""
    from tui.core.stats.segments import SourceStats

    n = 300
    v = Values(7)
    drafted = [float(v(4, 40)) for _ in range(n)]
    accepted = [float(v(0, int(d))) for d in drafted]
    vals = {"accepted": accepted, "drafted": drafted, "accept_len": [v(100, 400) / 100 for _ in range(n)]}
    out = []
    for reduce_ahead in (False, True):
        st = SourceStats("t")
        if k is not None:
            st.current.config.num_speculative_tokens = k  # (vLLM's config line says it)
        rc = columns("vllm", n, vals)
        pre = P.precompute(rc) if reduce_ahead else None
        if reduce_ahead:
            assert pre is not None  # (before, such a run was never reduced ahead)
        st.add_columns(rc, reduced=pre)
        out.append(json.dumps(st.to_dict(), sort_keys=True))
    assert out[0] == out[1]
    d = json.loads(out[0])["segments"][0]
    if k is None:
        assert d["accept_len"]["pooled"] is None  # no drafts, no k: no pooled length
    else:
        assert d["accept_len"]["pooled"] is not None  # drafts = drafted tokens / k


def test_a_run_whose_accept_len_is_printed_on_some_records_fits_a_segment_within_its_bounds():
    """An SGLang run with lines without accept len (reduced ahead by the Python code, which the
    native one declines): the segment takes the reduction where k + 1 bounds the printed values,
    and only there."""
    n = 60
    al = [NAN if i % 3 == 0 else 1.5 + (i % 5) / 4 for i in range(n)]  # printed ones: 1.5 ... 2.5
    vals = {"timestamp": [1.77e9 + i for i in range(n)], "accept_len": al, "running_req": [4.0] * n}
    rc = columns("sglang", n, vals, ["TP0"] * n)
    pre = P._python_precompute(rc, P.depth_free(rc))
    assert pre is not None and "accept_len" not in pre.full
    assert P.fits(pre, None, False) and P.fits(pre, 2, False) and P.fits(pre, 3, False)
    assert not P.fits(pre, 1, False)  # 2.5 > 1 + 1


def test_the_real_logs_are_there():
    assert len(REAL) >= 20  # the parametrisation above must not shrink to nothing


def test_summary_is_the_same_without_the_native_reduction(tmp_path, monkeypatch):
    from tui.core.pipeline import whole as summary

    log = tmp_path / "x.log"
    log.write_bytes(b"".join(p.read_bytes() for p in SAMPLES if "sglang" in p.name or "vllm" in p.name) * 3)

    def result() -> str:
        return json.dumps(summary.summarize_file(str(log), source="x", workers=1).result(), sort_keys=True)

    with_native = result()
    monkeypatch.setattr(P, "_native", None)
    assert result() == with_native


def test_flat_rows_are_their_list_of_rows():
    from tui.core.model.columns import FlatRows

    rows = [(0.5, 0.25), (1.0, 0.0), (0.75, 0.5)]
    r = FlatRows(array("d", [x for row in rows for x in row]), 2)
    assert len(r) == 3 and list(r) == rows and r == rows and rows == r
    assert r[1] == (1.0, 0.0) and r[-1] == (0.75, 0.5)
    assert r[1:] == rows[1:] and r[::2] == rows[::2] and len(r[5:9]) == 0
    with pytest.raises(IndexError):
        r[3]
    with pytest.raises(ValueError):
        FlatRows(array("d", [1.0, 2.0, 3.0]), 2)


@SETTINGS
@given(st.lists(st.lists(st.floats(-1e6, 1e6), min_size=0, max_size=900), min_size=1, max_size=12))
def test_batches_are_the_same_with_the_native_helpers(runs):
    """Batch sums from running sums (and their halving) at C speed: the same doubles."""
    from itertools import accumulate

    from tui.core.stats import estimate

    def batches(native: object) -> list[list[float]]:
        saved = estimate._native
        estimate._native = native
        try:
            b = estimate.Batches(2)
            for xs in runs:
                p = array("d", accumulate(xs, initial=0.0))
                q = array("d", accumulate((x * 0.5 for x in xs), initial=0.0))
                b.add_prefix((p, q))
            return [list(s) for s in b.sums] + [list(b.cur), [b.size, b.cur_n]]
        finally:
            estimate._native = saved

    same(batches(estimate._native), batches(None))


def test_row_lengths_and_flat_rows_read_lists_and_flat_rows_alike():
    from tui.core.model.columns import FlatRows, flat_rows, row_lengths

    rows = [(0.5, 0.25), (1.0, 0.0)]
    flat = FlatRows(array("d", [0.5, 0.25, 1.0, 0.0]), 2)
    assert row_lengths(rows) == row_lengths(flat) == {2}
    assert flat_rows(rows) == flat_rows(flat) == (array("d", [0.5, 0.25, 1.0, 0.0]), 2)
    assert row_lengths([(0.5,), None]) == {1, 0} and flat_rows([(0.5,), None]) is None
    assert flat_rows([(0.5,), (0.5, 0.5)]) is None and row_lengths(None) == set()
