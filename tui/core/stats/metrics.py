"""The statistics kept for one group of records (a rank, a segment, a whole source).

Two estimators of acceptance, kept side by side:

* **mean of lines**: the mean of the printed values (``accept_len``, ``accept_rate``): what a
  script averaging the log would get; the only one for a family whose lines print no counts.
* **pooled**: where lines print counts (interval counts, running totals differenced, Prometheus
  counters), ``1 + Σaccepted / Σdrafts`` and ``Σaccepted / Σdrafted``: the acceptance actually
  delivered, whatever the size of each interval.

A *weighted* mean never mixes units: the lines of a family that says they stand for their batch
(``Format.weight_by_running_req``) are weighted by ``#running-req``, the others by their drafts
(accept len) or drafted tokens (accept rate); a line without that count is left out of the
weighted mean (``weighted_n`` says how many are in). Which family prints what is the families'
to say (docs/formats.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import mul
from typing import cast

from tui.core.formats import registry
from tui.core.model import quantities
from tui.core.stats.checks import all_nan
from tui.core.stats.estimate import Estimate
from tui.core.stats.pooled import RatioChunk, RatioSeries
from tui.core.stats.series import ColumnChunk, Series

MAX_POSITIONS = 32


def _present(
    xs: Sequence[float], ws: Sequence[float] | None = None
) -> tuple[list[float], list[float] | None]:
    """The values that are there (not NaN), with their weights (NaN / non-positive → 0)."""
    s = sum(xs)
    if s == s:  # no NaN (an overflow to inf is still "no NaN": values were checked finite)
        vals = list(xs)
        keep = None
    else:
        keep = [x == x for x in xs]
        vals = list(compress(xs, keep))
    if ws is None:
        return vals, None
    wl = list(ws) if keep is None else list(compress(ws, keep))
    sw = sum(wl)
    if not (sw == sw and min(wl, default=1.0) > 0):
        wl = [w if w > 0 and math.isfinite(w) else 0.0 for w in wl]
    return vals, wl


def _chunk(
    xs: Sequence[float],
    ws: Sequence[float] | None,
    full: Mapping[str, tuple[float, float]],
    name: str,
    w_name: str | None = None,
) -> ColumnChunk | None:
    """The chunk of column ``name`` weighted by ``ws`` (column ``w_name``); columns in ``full``
    are wholly present and valid, with known (min, max): no pass over them is repeated."""
    ext = full.get(name)
    w_ext = full.get(w_name) if w_name is not None else None
    if ext is not None and (ws is None or (w_ext is not None and w_ext[0] > 0)):
        return ColumnChunk.of(xs, ws, ext, ws is not None)
    if not len(xs) or (xs[0] != xs[0] and all_nan(xs)):
        return None
    vals, wl = _present(xs, ws)
    return ColumnChunk.of(vals, wl) if vals else None


SERIES = (
    "accept_len",
    "accept_rate",
    "throughput",
    "running_req",
    "accept_len_derived",
    "accept_rate_derived",
)


def added_series() -> tuple[quantities.Quantity, ...]:
    """The quantities registered beyond the built-in ones that are means of printed values: each
    is a series of its own in every MetricSet (``MetricSet.more``), unweighted."""
    return tuple(q for q in quantities.added() if q.combine is quantities.Combine.MEAN)


@dataclass(slots=True)
class Prepared:
    """A run of checked records reduced once to what every :class:`MetricSet` it goes to needs
    (the source's totals, its segment, its rank): the same work is not done three times."""

    n: int
    chunks: dict[str, ColumnChunk | None]
    pooled_len: RatioChunk | None
    pooled_rate: RatioChunk | None
    accepted: int
    drafted: int
    positions: tuple[list[float], float] | None  # Σ rate_i · drafts per position i, Σ drafts
    first_ts: float | None
    last_ts: float | None
    system_efficiency: float | None = None  # the run's last printed value (a running total since start)


def prepare(
    n: int,
    v: Mapping[str, Sequence[float]],
    family: str,
    cumulative: bool,
    per_position: Sequence[tuple[float, ...] | None] | None,
    full: Mapping[str, tuple[float, float]] | None = None,
    system_efficiency: Sequence[float] | None = None,
) -> Prepared:
    """``v``: the checked values (NaN = not there), ``v["num_drafts"]`` completed from drafted / k
    where k is known. Weights: a family's lines that stand for their batch by #running-req;
    others by drafts (accept len) or drafted tokens (accept rate)."""
    al, ar, run = v["accept_len"], v["accept_rate"], v["running_req"]
    nd, acc, dr = v["num_drafts"], v["accepted"], v["drafted"]
    by_batch = registry.get(family).weight_by_running_req  # the family's lines stand for their batch
    w_len, w_rate = (run, run) if by_batch else (nd, dr)
    wl_name, wr_name = ("running_req", "running_req") if by_batch else ("num_drafts", "drafted")
    f = full or {}
    chunks = {
        "accept_len": _chunk(al, w_len, f, "accept_len", wl_name),
        "accept_rate": _chunk(ar, w_rate, f, "accept_rate", wr_name),
        "throughput": _chunk(v["throughput"], None, f, "throughput"),
        "running_req": _chunk(run, None, f, "running_req"),
        "accept_len_derived": _chunk(v["accept_len_derived"], nd, f, "accept_len_derived", "num_drafts"),
        "accept_rate_derived": _chunk(v["accept_rate_derived"], nd, f, "accept_rate_derived", "num_drafts"),
    }
    for q in added_series():
        col = v.get(q.name)
        if col is not None:
            chunks[q.name] = _chunk(col, None, f, q.name)
    pooled_len = pooled_rate = None
    accepted = drafted = 0
    if cumulative:  # running totals: the interval values were derived by differencing them
        ald, ard = v["accept_len_derived"], v["accept_rate_derived"]
        rows = [((a - 1.0) * d, r * d, d) for a, r, d in zip(ald, ard, nd) if d > 0 and a == a and r == r]
        dens = [d for _, _, d in rows]
        pooled_len = RatioChunk.of([a for a, _, _ in rows], dens)
        pooled_rate = RatioChunk.of([r for _, r, _ in rows], dens)
    elif _positive(nd) and _positive(dr) and not math.isnan(sum(acc)):  # every count there
        pooled_len = RatioChunk.of(acc, nd)
        pooled_rate = RatioChunk.of(acc, dr)
        accepted, drafted = int(math.fsum(acc)), int(math.fsum(dr))
    elif all_nan(acc) and not all_nan(v["accept_len_derived"]):
        # verify steps and 1 + Δaccepted / Δsteps only, no token counts (they are other records',
        # e.g. per-request lines'): pooled accept len, never the rate
        rows2 = [((a - 1.0) * d, d) for a, d in zip(v["accept_len_derived"], nd) if d > 0 and a == a]
        pooled_len = RatioChunk.of([a for a, _ in rows2], [d for _, d in rows2])
    elif not all_nan(acc):
        pl = [(a, d) for a, d in zip(acc, nd) if d > 0 and a == a]
        pooled_len = RatioChunk.of([a for a, _ in pl], [d for _, d in pl])
        pr = [(a, d) for a, d in zip(acc, dr) if d > 0 and a == a]
        pooled_rate = RatioChunk.of([a for a, _ in pr], [d for _, d in pr])
        accepted = int(math.fsum(a for a in acc if a == a))
        # the drafted tokens of the records whose accepted count is there (a refused one takes its
        # drafted tokens out too): the same however the records are cut into runs
        drafted = int(math.fsum(d for a, d in zip(acc, dr) if d == d and a == a))
    positions = None
    if per_position is not None:
        positions = _positions(per_position, nd)
    ts = v["timestamp"]
    first = last = None
    if not all_nan(ts):
        first = next(t for t in ts if t == t)
        last = next(t for t in reversed(ts) if t == t)
    last_se = None  # the last printed value that is a fraction (it is cumulative: one is kept)
    if system_efficiency is not None and not all_nan(system_efficiency):
        last_se = next((x for x in reversed(system_efficiency) if 0.0 <= x <= 1.0), None)
    return Prepared(n, chunks, pooled_len, pooled_rate, accepted, drafted, positions, first, last, last_se)


def _positive(col: Sequence[float]) -> bool:
    """Every value there (not NaN), finite and > 0, checked at C speed."""
    return len(col) > 0 and math.isfinite(sum(col)) and min(col) > 0


def _positions(
    per_position: Sequence[tuple[float, ...] | None], nd: Sequence[float]
) -> tuple[list[float], float] | None:
    """Σ rate_i · drafts per position i and Σ drafts over the records that count: a per-position
    list of at most MAX_POSITIONS, drafts > 0; a rate counts when finite and within [0, 1]. None
    when no record counts. One pass per position at C speed when every record counts with the
    same k and every rate is in range (the usual run), else record by record."""
    full = cast("list[tuple[float, ...]]", per_position)  # when all(per_position) holds
    if (
        _positive(nd) and all(per_position) and min(map(len, full)) == max(map(len, full)) <= MAX_POSITIONS
    ):  # every record counts, with the same k: no filtering pass
        cols = list(zip(*full))
        if all(0.0 <= min(c) and max(c) <= 1.0 for c in cols):
            return [math.fsum(map(mul, c, nd)) for c in cols], math.fsum(nd)
    rows = [(pp, w) for pp, w in zip(per_position, nd) if pp and w > 0 and len(pp) <= MAX_POSITIONS]
    if not rows:
        return None
    k = len(rows[0][0])
    if all(len(pp) == k for pp, _ in rows):
        cols = list(zip(*(pp for pp, _ in rows)))
        if all(0.0 <= min(c) and max(c) <= 1.0 for c in cols):  # NaN fails both: the loop below
            ws = [w for _, w in rows]
            return [math.fsum(map(mul, c, ws)) for c in cols], math.fsum(ws)
    sums: list[float] = []
    weight = 0.0
    for pp, w in rows:
        if len(sums) < len(pp):
            sums.extend([0.0] * (len(pp) - len(sums)))
        for i, x in enumerate(pp):
            if math.isfinite(x) and 0.0 <= x <= 1.0:
                sums[i] += x * w
        weight += w
    return sums, weight


class MetricSet:
    """accept len, accept rate, throughput, running requests, the values derived from running
    totals, the pooled acceptance, and the pooled per-position acceptance:
    Σ(rate_i · drafts) / Σ drafts."""

    __slots__ = (
        "records",
        "accept_len",
        "accept_rate",
        "throughput",
        "running_req",
        "accept_len_derived",
        "accept_rate_derived",
        "pooled_len",
        "pooled_rate",
        "accepted",
        "drafted",
        "_pos_sums",
        "_pos_weight",
        "first_ts",
        "last_ts",
        "system_efficiency",
        "more",
    )

    def __init__(self) -> None:
        self.records = 0
        self.accept_len = Series()
        self.accept_rate = Series()
        self.throughput = Series()
        self.running_req = Series()
        self.accept_len_derived = Series()
        self.accept_rate_derived = Series()
        self.pooled_len = RatioSeries(1.0)  # 1 + Σaccepted / Σdrafts
        self.pooled_rate = RatioSeries(0.0)  # Σaccepted / Σdrafted
        self.accepted = 0  # printed interval accepted-token counts, summed
        self.drafted = 0
        self._pos_sums: list[float] = []
        self._pos_weight = 0.0
        self.first_ts: float | None = None
        self.last_ts: float | None = None
        self.system_efficiency: float | None = None  # the last printed (a running total since start)
        self.more: dict[str, Series] = {}  # the added quantities' series (added_series), by name
        for s in (self.accept_len, self.accept_len_derived, self.pooled_len):
            s.set_bounds(1.0, math.inf)
        for s in (self.accept_rate, self.accept_rate_derived, self.pooled_rate):
            s.set_bounds(0.0, 1.0)

    def set_depth(self, k: int | None) -> None:
        """The draft depth k, when known: accept len intervals are clamped to [1, k + 1]."""
        hi = math.inf if not k else k + 1.0
        for s in (self.accept_len, self.accept_len_derived, self.pooled_len):
            s.set_bounds(1.0, hi)

    def add(self, p: Prepared) -> None:
        """Fold in a prepared run of records."""
        self.records += p.n
        for name in SERIES:
            c = p.chunks[name]
            if c is not None:
                getattr(self, name).merge_chunk(c)
        if len(p.chunks) > len(SERIES):
            for name, c in p.chunks.items():
                if c is not None and name not in SERIES:
                    self.added(name).merge_chunk(c)
        if p.pooled_len is not None:
            self.pooled_len.merge(p.pooled_len)
        if p.pooled_rate is not None:
            self.pooled_rate.merge(p.pooled_rate)
        self.accepted += p.accepted
        self.drafted += p.drafted
        if p.positions is not None:
            sums, weight = p.positions
            if len(self._pos_sums) < len(sums):
                self._pos_sums.extend([0.0] * (len(sums) - len(self._pos_sums)))
            for i, x in enumerate(sums):
                self._pos_sums[i] += x
            self._pos_weight += weight
        if p.system_efficiency is not None:
            self.system_efficiency = p.system_efficiency
        if p.first_ts is not None:
            if self.first_ts is None:
                self.first_ts = p.first_ts
            self.last_ts = p.last_ts

    def count_refused(self, nonfinite: dict[str, int], out_of_range: dict[str, int]) -> None:
        """Values the checks refused, counted on the series they were meant for."""
        for name, s in (
            ("accept_len", self.accept_len),
            ("accept_rate", self.accept_rate),
            ("throughput", self.throughput),
            ("running_req", self.running_req),
            ("accept_len_derived", self.accept_len_derived),
            ("accept_rate_derived", self.accept_rate_derived),
        ):
            s.nonfinite += nonfinite.get(name, 0)
            s.out_of_range += out_of_range.get(name, 0)
        for q in added_series():
            if q.name in nonfinite or q.name in out_of_range:
                s = self.added(q.name)
                s.nonfinite += nonfinite.get(q.name, 0)
                s.out_of_range += out_of_range.get(q.name, 0)

    def added(self, name: str) -> Series:
        """The series of added quantity ``name`` (made, with its quantity's bounds, on first use)."""
        s = self.more.get(name)
        if s is None:
            s = self.more[name] = Series()
            valid = quantities.get(name).valid
            if valid is not None:
                s.set_bounds(*valid)
        return s

    def per_position(self) -> list[float] | None:
        if not self._pos_weight:
            return None
        return [s / self._pos_weight for s in self._pos_sums]

    def to_dict(self, rate_transform: tuple[float, float] | None = None) -> dict:
        al = self.accept_len.to_dict()
        al["pooled"] = self.pooled_len.to_dict("accepted", "drafts") if self.pooled_len.n else None
        ar = self.accept_rate.to_dict()
        ar["pooled"] = self.pooled_rate.to_dict("accepted", "drafted") if self.pooled_rate.n else None
        d = {
            "records": self.records,
            "accept_len": al,
            "accept_rate": ar,
            "accept_rate_normalized": self.accept_len.to_dict(rate_transform) if rate_transform else None,
            "throughput": self.throughput.to_dict(),
            "running_req": self.running_req.to_dict(),
        }
        if self.accept_len_derived.n or self.accept_rate_derived.n:
            d["accept_len_derived"] = self.accept_len_derived.to_dict()
            d["accept_rate_derived"] = self.accept_rate_derived.to_dict()
        if self.drafted:
            d["tokens"] = {
                "accepted": self.accepted,
                "drafted": self.drafted,
                "pooled_rate": self.accepted / self.drafted,
            }
        pp = self.per_position()
        if pp is not None:
            d["per_position"] = pp
        # emitted / (verify steps x (k+1)) since the server started, as the last line printed it
        se = self.system_efficiency
        d["system_efficiency"] = None if se is None else {"last": se, "since": "server start"}
        if self.more:
            d["more"] = {name: s.to_dict() for name, s in self.more.items()}
        return d


POOLED, MEAN_OF_LINES = "pooled", "mean_of_lines"


@dataclass(frozen=True, slots=True)
class Headline:
    """The acceptance figure a group of records determines, the one every output leads with:
    accept len pooled from counts (1 + Σaccepted / Σdrafts) where the drafts are counted, else the
    mean of the printed accept len, else — counts of accepted and drafted tokens with neither
    drafts nor a printed accept len — the accept rate pooled from them (Σaccepted / Σdrafted).
    ``numerator`` / ``denominator``: the pooled counts (None for a mean of printed values)."""

    quantity: str  # "accept_len" or "accept_rate"
    estimator: str  # POOLED or MEAN_OF_LINES
    estimate: Estimate
    numerator: float | None = None
    denominator: float | None = None


def headline(m: MetricSet) -> Headline | None:
    """The figure :class:`Headline` describes, for ``m``; None when the records determine no
    acceptance at all."""
    if m.pooled_len.n:
        p = m.pooled_len
        return Headline("accept_len", POOLED, p.estimate(), p.numerator, p.denominator)
    if m.accept_len.n:
        return Headline("accept_len", MEAN_OF_LINES, m.accept_len.estimate())
    if m.pooled_rate.n:
        p = m.pooled_rate
        return Headline("accept_rate", POOLED, p.estimate(), p.numerator, p.denominator)
    return None
