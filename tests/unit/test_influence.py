"""The load-adjusted variance from per-record influence values in log order (issue 21, item 2):
tui/core/stats/influence.py."""

from __future__ import annotations

import math
import random
from array import array
from itertools import accumulate

import pytest

from tui.core.stats import influence
from tui.core.stats.estimate import Batches, mean_estimate
from tui.core.stats.influence import TimeBins, side_variance
from tui.core.stats.load import LoadStrata, bin_of
from tui.core.stats.load_compare import compare_load_adjusted
from tui.core.stats.lrv import SELECT_P

NAN = math.nan


def _records(rng: random.Random, n: int, phi: float = 0.8) -> tuple[list[float], list[float], list[float]]:
    """Accept lengths, batch sizes that alternate between two bins record by record (the strata
    interleave in time) and shared AR(1) noise."""
    e, xs, runs = 0.0, [], []
    for i in range(n):
        e = phi * e + rng.gauss(0.0, 0.3 * math.sqrt(1 - phi * phi))
        runs.append(4.0 if i % 2 else 16.0)
        xs.append(round(2.5 + e - (0.2 if i % 2 else 0.0), 2))
    return xs, runs, [NAN] * n


def _feed(strata: LoadStrata, xs, runs, cut: list[int]) -> None:
    """The records in runs cut at ``cut`` (short runs go value by value, long ones by chunks)."""
    bounds = [0, *cut, len(xs)]
    for lo, hi in zip(bounds, bounds[1:]):
        v = {
            "accept_len": xs[lo:hi],
            "running_req": runs[lo:hi],
            "accepted": [NAN] * (hi - lo),
            "num_drafts": [NAN] * (hi - lo),
        }
        strata.add(v, False)


def test_the_batches_do_not_depend_on_how_the_log_was_cut() -> None:
    rng = random.Random(1)
    xs, runs, _ = _records(rng, 5000)
    xs[17] = NAN  # one value not printed: it takes its place in time but no value
    one, many = LoadStrata(), LoadStrata()
    _feed(one, xs, runs, [])
    _feed(many, xs, runs, sorted(rng.sample(range(1, 5000), 300)))
    assert one.time.records == many.time.records == 5000
    assert one.time.batches.size == many.time.batches.size
    for b in one.time.group:
        ta, tb = one.time.totals(b), many.time.totals(b)
        assert ta is not None and tb is not None
        assert ta == pytest.approx(tb)
        ca, cb = one.time.group[b], many.time.group[b]
        assert list(one.time.batches.sums[ca]) == pytest.approx(list(many.time.batches.sums[cb]))
    # the totals are the bins' own sums and counts
    for b in one.time.group:
        vals = [x for x, r in zip(xs, runs) if bin_of(r) == b and x == x]
        sx, cnt, _, _ = one.time.totals(b)  # type: ignore[misc]
        assert cnt == len(vals) and sx == pytest.approx(math.fsum(vals))


def test_one_stratum_is_the_variance_of_its_mean() -> None:
    """With one bin and weight 1 the influence values are the values minus their mean over n: the
    variance is the mean's own (the same long-run variance on the same batch means)."""
    rng = random.Random(2)
    xs = [2.5 + rng.gauss(0.0, 0.4) for _ in range(3000)]
    tb = TimeBins()
    tb.add_run([bin_of(8.0)] * len(xs), xs, None, None)
    own = Batches(1, influence.UNITS)
    own.add_prefix([list(accumulate(xs, initial=0.0))])
    mean = math.fsum(xs) / len(xs)
    var_x = math.fsum((x - mean) ** 2 for x in xs) / (len(xs) - 1)
    se = mean_estimate(own, len(xs), mean, var_x, -math.inf, math.inf).se
    sv = side_variance(tb, {bin_of(8.0): 1.0}, pooled=False, select=SELECT_P)  # the mean's own rule
    assert sv is not None and se is not None
    assert sv.var == pytest.approx(se**2, rel=1e-6)


def test_the_places_answer_as_bisect_does() -> None:
    """The running sums at a bin's places, read by index and by the slices a batch step reads
    (two per channel, one step apart), are those of a plain list of running sums."""
    rng = random.Random(7)
    n = 500
    pos = array("i", sorted(rng.sample(range(n), 120)))
    vals = [rng.random() for _ in pos]
    where = influence._Where(pos)
    px = influence._Prefix(n, where, list(accumulate(vals, initial=0.0)))
    pc = influence._Prefix(n, where, None)
    full, count, acc, c = [0.0], [0.0], 0.0, 0
    at = dict(zip(pos, vals))
    for i in range(n):
        if i in at:
            acc += at[i]
            c += 1
        full.append(acc)
        count.append(float(c))
    for _ in range(200):
        size = rng.choice((1, 2, 3, 8, 33))
        i = rng.randrange(0, n)
        last = min(n, i + size * rng.randrange(1, 40))
        for p, want in ((px, full), (pc, count)):
            assert p[i + size : last + 1 : size] == pytest.approx(want[i + size : last + 1 : size])
            assert p[i:last:size] == pytest.approx(want[i:last:size])
            assert p[i] == pytest.approx(want[i])


def test_interleaved_strata_share_their_noise() -> None:
    """Two strata that alternate record by record under one slowly moving noise: their errors
    are the same error, so the variance of the weighted mean is about that of one stratum (a sum
    of stratum variances as if independent would be about half of it)."""
    rng = random.Random(3)
    xs, runs, _ = _records(rng, 4000, phi=0.95)
    st = LoadStrata()
    _feed(st, xs, runs, [])
    bins = sorted(st.time.group)
    w = {b: 0.5 for b in bins}
    sv = side_variance(st.time, w, pooled=False)
    assert sv is not None
    naive = math.fsum(0.25 * (st.bins[b].lines.estimate().se or 0.0) ** 2 for b in bins)
    assert sv.var > 1.6 * naive, (sv.var, naive)


def test_an_a_a_pair_at_different_loads_is_not_called_different() -> None:
    rng = random.Random(4)
    a, b = LoadStrata(), LoadStrata()
    for side in (a, b):
        xs, runs, _ = _records(rng, 2000, phi=0.5)
        _feed(side, xs, runs, [700, 1400])
    out = compare_load_adjusted(a, b, 10.0, 10.0)
    assert out["verdict"] in ("no_difference", "insufficient"), out
    assert out["ci95"] is None or out["ci95"][0] <= 0.0 <= out["ci95"][1]


def test_pooled_counts_use_accepted_and_drafts() -> None:
    rng = random.Random(5)
    tb = TimeBins()
    n = 2000
    nd = [float(rng.randint(50, 500)) for _ in range(n)]
    acc = [round(d * (1.4 + rng.gauss(0.0, 0.2))) * 1.0 for d in nd]
    tb.add_run([bin_of(8.0)] * n, [NAN] * n, acc, nd)
    sx, cnt, sa, sd = tb.totals(bin_of(8.0))  # type: ignore[misc]
    assert cnt == 0 and sa == pytest.approx(sum(acc)) and sd == pytest.approx(sum(nd))
    sv = side_variance(tb, {bin_of(8.0): 1.0}, pooled=True)
    assert sv is not None and 0.0 < sv.var < 1e-3


def test_chunks_reduced_natively_put_the_bins_in_time_as_value_by_value() -> None:
    """A run reduced by precompute (the native reduction when it is built, with the records'
    places in int32) gives the batches that feeding the same records ten at a time gives."""
    from tui.core.model.columns import NUMERIC_FIELDS, RecordColumns
    from tui.core.stats import precompute as P

    rng = random.Random(6)
    n = 3000
    xs = [round(2.5 + rng.gauss(0.0, 0.4), 2) for _ in range(n)]
    xs = [min(4.0, max(1.0, x)) for x in xs]
    runs = [float(rng.choice((1, 3, 5, 9, 17, 40))) for _ in range(n)]
    vals = {"accept_len": xs, "accept_rate": [(x - 1) / 3 for x in xs], "running_req": runs}
    values = {f: array("d", vals.get(f, [NAN] * n)) for f in NUMERIC_FIELDS}
    rc = RecordColumns("sglang", "decode", n, values, None, None, None, False, array("q", range(1, n + 1)), n)
    free = P.depth_free(rc)
    pre = P._native_precompute(rc, free) or P._python_precompute(rc, free)
    assert pre is not None and pre.load is not None
    chunked, by_value = LoadStrata(), LoadStrata()
    chunked.add(pre.v, False, pre.load)
    _feed(by_value, xs, runs, list(range(10, n, 10)))
    assert chunked.time.records == by_value.time.records == n
    assert sorted(chunked.time.group) == sorted(by_value.time.group)
    for b in chunked.time.group:
        ca, cb = chunked.time.group[b], by_value.time.group[b]
        for k in range(2):  # Σx and count per batch
            assert list(chunked.time.batches.sums[ca + k]) == pytest.approx(
                list(by_value.time.batches.sums[cb + k])
            )


def _counts_runs(rng: random.Random, n: int) -> dict[str, list[float]]:
    runs = [float(rng.choice((1, 3, 5, 9, 17, 40, 100))) for _ in range(n)]
    xs = [NAN if rng.random() < 0.05 else round(rng.uniform(1.0, 4.0), 2) for _ in range(n)]
    nd = [float(rng.randint(0, 500)) for _ in range(n)]
    acc = [NAN if rng.random() < 0.05 else float(rng.randint(0, int(3 * d))) for d in nd]
    return {"accept_len": xs, "running_req": runs, "accepted": acc, "num_drafts": nd}


@pytest.mark.parametrize("seed", range(6))
def test_chunks_read_at_the_batch_boundaries_give_the_generic_sums_bit_for_bit(seed, monkeypatch) -> None:
    """TimeBins.add_chunks reads every channel only where a batch closes; the generic path
    (Batches.add_prefix over each channel's running sums) gives the very same doubles, whatever
    the open batch holds when a run comes and however long the runs are."""
    from tui.core.stats.load import bin_chunks

    rng = random.Random(seed)
    total = rng.choice((3_000, 40_000, 120_000))
    cuts = sorted(rng.sample(range(1, total), rng.randint(3, 40)))
    v = _counts_runs(rng, total)

    class Generic(TimeBins):
        __slots__ = ()

        def _add_at_boundaries(self, n, chunks):
            return False  # every run through Batches.add_prefix

    fast, generic = TimeBins(), Generic()
    used = []
    real = TimeBins._add_at_boundaries

    def spy(self, n, chunks):
        used.append(real(self, n, chunks))
        return used[-1]

    monkeypatch.setattr(TimeBins, "_add_at_boundaries", spy)
    for lo, hi in zip([0, *cuts], [*cuts, total]):
        part = {k: c[lo:hi] for k, c in v.items()}
        chunks = bin_chunks(part, False)
        fast.add_chunks(hi - lo, chunks)
        generic.add_chunks(hi - lo, chunks)
    assert used and all(used)  # the fast path took every run
    assert fast.records == generic.records == total and fast.group == generic.group
    b1, b2 = fast.batches, generic.batches
    assert (b1.size, b1.cur_n) == (b2.size, b2.cur_n)
    assert [a.tobytes() for a in b1.sums] == [a.tobytes() for a in b2.sums]
    assert array("d", b1.cur).tobytes() == array("d", b2.cur).tobytes()
