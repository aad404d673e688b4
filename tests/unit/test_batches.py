"""Batch means (stats/estimate.py Batches): a run added through its running sums in one call
gives exactly the batch sums of adding its values one at a time, across the doublings (values
that are multiples of 1/8, so every sum is exact), and exactly what closing one batch at a time
over the same running sums gives (any values)."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import accumulate

from _hypothesis_util import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.core.stats.estimate import UNITS, Batches


def _prefix(xs: list[float]) -> array:
    return array("d", accumulate(xs, initial=0.0))


def _one_by_one(runs: list[list[float]], channels: int) -> Batches:
    b = Batches(channels)
    for xs in runs:
        for x in xs:
            b.add_prefix([_prefix([x + c]) for c in range(channels)])
    return b


def _bulk(runs: list[list[float]], channels: int) -> Batches:
    b = Batches(channels)
    for xs in runs:
        b.add_prefix([_prefix([x + c for x in xs]) for c in range(channels)])
    return b


def _same(a: Batches, b: Batches) -> None:
    assert a.size == b.size
    assert a.cur_n == b.cur_n
    assert a.cur == b.cur
    assert [list(s) for s in a.sums] == [list(s) for s in b.sums]


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.lists(st.integers(0, 40).map(lambda i: i / 8), max_size=3 * UNITS),
        max_size=6,
    ),
    st.integers(1, 2),
)
def test_bulk_equals_one_by_one(runs: list[list[float]], channels: int) -> None:
    _same(_bulk(runs, channels), _one_by_one(runs, channels))


def test_long_run_doubles_like_one_by_one() -> None:
    xs = [(i * 7919 % 101) / 8 for i in range(9 * UNITS + 5)]
    runs = [xs[:3], xs[3 : 5 * UNITS], xs[5 * UNITS :]]
    bulk, single = _bulk(runs, 2), _one_by_one(runs, 2)
    _same(bulk, single)
    assert bulk.size > 4


class _PerBatch(Batches):
    """Closes one batch at a time (the loop add_prefix took before whole batches were added at once)."""

    __slots__ = ()

    def add_prefix(self, prefixes: Sequence[Sequence[float]]) -> None:
        i, n = 0, len(prefixes[0]) - 1
        while i < n:
            take = min(self.size - self.cur_n, n - i)
            for c, p in enumerate(prefixes):
                self.cur[c] += p[i + take] - p[i]
            self.cur_n += take
            i += take
            if self.cur_n == self.size:
                self._close()


def test_bulk_equals_per_batch_on_inexact_values() -> None:
    xs = [(i * 7919 % 101) / 10 for i in range(9 * UNITS + 5)]
    ys = [float(i % 7) for i in range(len(xs))]
    cut = [0, 3, 700, 5 * UNITS, 5 * UNITS + 1, len(xs)]
    a, b = Batches(2), _PerBatch(2)
    for lo, hi in zip(cut, cut[1:]):
        ps = [_prefix(xs[lo:hi]), _prefix(ys[lo:hi])]
        a.add_prefix(ps)
        b.add_prefix(ps)
    _same(a, b)
