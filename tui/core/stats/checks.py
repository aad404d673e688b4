"""The one check every value passes before it reaches the statistics: finite, and physically
possible. Refused values are counted (``nonfinite``, ``out_of_range``) with an example line and
kept out of every sum, so a line printing ``accept len: 1e308`` cannot overflow or move a mean.

Bounds: accept len in [1, k + 1] (k = draft depth, when known: the record's per-position list, or
the segment's config / counts; when unknown, k ≤ MAX_DEPTH: no server drafts more tokens per step),
rates in [0, 1], counts, throughput and batch sizes in [0, 2**53] (exact as doubles; no sum of them
can overflow), accepted tokens ≤ drafted tokens. Each range is its quantity's ``valid``
(tui.core.model.quantities): a quantity registered with one is checked like the built-in ones.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import eq
from typing import Any, cast

from tui.core.model import quantities
from tui.core.model.columns import RecordColumns

NAN = math.nan
_EPS = 1e-9
MAX_DEPTH = quantities.MAX_DEPTH
BIG = quantities.BIG
# The record's own per-position list bounds this quantity's value (accept len <= len(list) + 1).
ROW_BOUND = "accept_len"


def ranges() -> dict[str, tuple[float, float]]:
    """field -> (low, high) of every checked quantity (tui.core.model.quantities), in layout order;
    "k+1" bounds are set per segment and record (``Quantity.depth_bound``)."""
    key = quantities.column_names()
    got = _ranges.get(key)
    if got is None:
        _ranges.clear()
        got = _ranges[key] = {q.name: cast("tuple[float, float]", q.valid) for q in quantities.checked()}
        _depth[key] = frozenset(q.name for q in quantities.checked() if q.depth_bound)
    return got


def depth_bounded() -> frozenset[str]:
    """The checked quantities whose upper end is k + 1 where the draft depth k is known."""
    ranges()
    return _depth[quantities.column_names()]


_ranges: dict[tuple[str, ...], dict[str, tuple[float, float]]] = {}
_depth: dict[tuple[str, ...], frozenset[str]] = {}
# The built-in checked quantities (a quantity registered later is in ranges())
RANGES: dict[str, tuple[float, float]] = dict(ranges())


def words(name: str) -> str:
    """How a field is written in messages (its quantity's label)."""
    return quantities.label(name)


@dataclass(slots=True)
class Refused:
    """Counts of refused values, by field, and the first example."""

    nonfinite: dict[str, int] = field(default_factory=dict)
    out_of_range: dict[str, int] = field(default_factory=dict)
    example: dict | None = None

    def total(self) -> int:
        return sum(self.nonfinite.values()) + sum(self.out_of_range.values())

    def merge(self, other: Refused) -> None:
        for mine, theirs in ((self.nonfinite, other.nonfinite), (self.out_of_range, other.out_of_range)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v
        if self.example is None:
            self.example = other.example

    def to_dict(self) -> dict:
        return {
            "nonfinite": dict(self.nonfinite),
            "out_of_range": dict(self.out_of_range),
            "example": self.example,
        }

    def message(self) -> str:
        parts = [f"{v} {words(k)} not finite" for k, v in sorted(self.nonfinite.items())]
        parts += [f"{v} {words(k)} out of range" for k, v in sorted(self.out_of_range.items())]
        ex = self.example
        where = ""
        if ex is not None:
            where = f" — e.g. line {ex['line']}: {words(ex['field'])} = {ex['value']}"
            if ex.get("text"):
                where += f" in {ex['text'][:160]!r}"
        return "values left out of the statistics: " + ", ".join(parts) + where


def refusal(name: str, x: float, depth: int | None = None, row_depth: int | None = None) -> str | None:
    """Why one value of field ``name`` is refused by the check :func:`clean` applies, or None when
    it passes: "not finite", or "out of range" (outside :data:`RANGES`; accept len at most k + 1,
    k = ``row_depth`` (the record's own per-position list) when known, else ``depth`` (the
    segment's)). The one rule every consumer uses: statistics, alerts, scales, charts, ``stream``."""
    lo, hi = ranges()[name]
    if name == ROW_BOUND and row_depth:
        hi = row_depth + 1.0
    elif depth is not None and name in depth_bounded():
        hi = depth + 1.0
    if not math.isfinite(x):
        return "not finite"
    if lo - _EPS <= x <= hi + _EPS:
        return None
    return "out of range"


def admissible(name: str, x: float, depth: int | None = None, row_depth: int | None = None) -> bool:
    """Whether one value of field ``name`` passes the check :func:`clean` applies (see :func:`refusal`)."""
    return refusal(name, x, depth, row_depth) is None


def record_refusals(rec: Any, depth: int | None = None) -> dict[str, str]:
    """field -> reason for every printed value of a record (any object with the fields' attributes:
    a parsed Record, a pane's Point) that :func:`clean` would refuse; ``depth``: the segment's draft
    depth k when known. Empty for a clean record (the common case)."""
    pp = getattr(rec, "per_position", None)
    row = len(pp) if pp else None
    out: dict[str, str] = {}
    value = getattr(rec, "value", None)  # a Record: its added quantities' values too
    for name in ranges():
        x = value(name) if callable(value) else getattr(rec, name, None)
        if x is not None:
            why = refusal(name, x, depth, row)
            if why is not None:
                out[name] = why
    acc, dr = getattr(rec, "accepted", None), getattr(rec, "drafted", None)
    if (
        "accepted" not in out
        and "drafted" not in out
        and acc is not None
        and dr is not None
        and not getattr(rec, "cumulative", False)
        and acc > dr + _EPS
    ):
        out["accepted"] = "more than drafted"
    return out


_nan_cache: dict[int, bytes] = {}


def all_nan(col: Sequence[float]) -> bool:
    """Every value NaN (a column nothing printed), checked at C speed when it is an array."""
    n = len(col)
    b = _nan_cache.get(n)
    if b is None:
        b = array("d", [NAN]).tobytes() * n
        if len(_nan_cache) < 64:
            _nan_cache[n] = b
    return (isinstance(col, array) and col.tobytes() == b) or all(x != x for x in col)


def _extent(col: Sequence[float], lo: float, hi: float) -> tuple[float, float] | None:
    """(min, max) when every value is there, finite and within [lo, hi] (checked at C speed)."""
    s = sum(col)
    if s - s != 0.0:
        return None
    mn, mx = min(col), max(col)
    return (mn, mx) if mn >= lo - _EPS and mx <= hi + _EPS else None


def clean(
    cols: RecordColumns, depth: int | None, raws: Sequence[str] | None = None
) -> tuple[dict[str, Sequence[float]], Refused, dict[str, tuple[float, float]]]:
    """The columns with every refused value replaced by NaN (a missing value), what was refused,
    and (min, max) of the columns whose every value is there and valid (so they are not scanned
    again). ``depth``: the draft depth k known for the segment (None: unknown)."""
    refused = Refused()
    out: dict[str, Sequence[float]] = {}
    full: dict[str, tuple[float, float]] = {}
    pp = cols.per_position
    n = cols.n
    bounded = depth_bounded()
    for name, (lo, hi) in ranges().items():
        col = cols.col(name)
        if name in bounded and depth is not None:
            hi = depth + 1.0
        varying_hi = name == ROW_BOUND and pp is not None
        if not n or (col[0] != col[0] and all_nan(col)):  # nothing printed
            out[name] = col
            continue
        if varying_hi and pp is not None and all(pp):  # each record bounded by its own list
            k_min = min(map(len, cast("list[tuple[float, ...]]", pp)))
            ext = _extent(col, lo, k_min + 1.0)  # within the tightest bound: all good
            if ext is not None:
                out[name] = col
                full[name] = ext
                continue
        if not varying_hi:
            ext = _extent(col, lo, hi)
            if ext is not None:
                out[name] = col
                full[name] = ext
                continue
            printed = list(compress(col, map(eq, col, col)))  # without the NaN (not printed)
            if printed and _extent(printed, lo, hi) is not None:
                out[name] = col
                continue
        good = array("d", col)
        for i, x in enumerate(col):
            if x != x:
                continue  # not printed
            h = hi
            row = pp[i] if varying_hi and pp is not None else None
            if row:
                h = len(row) + 1.0
            if not math.isfinite(x):
                bucket = refused.nonfinite
            elif x < lo - _EPS or x > h + _EPS:
                bucket = refused.out_of_range
            else:
                continue
            bucket[name] = bucket.get(name, 0) + 1
            good[i] = NAN
            if refused.example is None:
                refused.example = _example(cols, i, name, x, raws)
        out[name] = good
    for name, (count, first) in (cols.printed_nan or {}).items():
        refused.nonfinite[name] = refused.nonfinite.get(name, 0) + count
        if refused.example is None:
            refused.example = _example(cols, first, name, NAN, raws)
    acc, dr = out["accepted"], out["drafted"]
    if not cols.cumulative and not all_nan(acc) and not all_nan(dr):
        bad = [i for i, (a, d) in enumerate(zip(acc, dr)) if a > d + _EPS]  # NaN compares False
        if bad:
            acc2 = array("d", acc)
            for i in bad:
                acc2[i] = NAN
            out["accepted"] = acc2
            refused.out_of_range["accepted"] = refused.out_of_range.get("accepted", 0) + len(bad)
            if refused.example is None:
                refused.example = _example(cols, bad[0], "accepted", acc[bad[0]], raws)
            full.pop("accepted", None)
    return out, refused, full


def _example(cols: RecordColumns, i: int, name: str, x: float, raws: Sequence[str] | None) -> dict:
    line = cols.line_no(i)
    return {"line": line, "field": name, "value": repr(x), "text": raws[i] if raws is not None else None}
