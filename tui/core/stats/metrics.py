"""The statistics kept for one group of records (a rank, a segment, a whole source)."""

from __future__ import annotations

import math

from tui.core.records import Record
from tui.core.stats.series import ColumnChunk, Series

# accept len (weighted by #running-req), accept rate (same weights), throughput, running requests
Columns = tuple[ColumnChunk, ColumnChunk, ColumnChunk, ColumnChunk]

MAX_POSITIONS = 32


class MetricSet:
    """accept len, accept rate, throughput, running requests, and the vLLM V0 derived values,
    plus pooled per-position acceptance (vLLM): Σ(rate_i · num_drafts) / Σ num_drafts."""

    __slots__ = (
        "records",
        "accept_len",
        "accept_rate",
        "throughput",
        "running_req",
        "accept_len_derived",
        "accept_rate_derived",
        "accepted",
        "drafted",
        "_pos_sums",
        "_pos_weight",
        "first_ts",
        "last_ts",
    )

    def __init__(self) -> None:
        self.records = 0
        self.accept_len = Series()
        self.accept_rate = Series()
        self.throughput = Series()
        self.running_req = Series()
        self.accept_len_derived = Series()
        self.accept_rate_derived = Series()
        self.accepted = 0  # printed interval accepted-token counts (V1 / llama.cpp), summed
        self.drafted = 0
        self._pos_sums: list[float] = []
        self._pos_weight = 0.0
        self.first_ts: float | None = None
        self.last_ts: float | None = None

    def add(self, r: Record) -> None:
        self.records += 1
        w = r.weight
        if r.accept_len is not None:
            self.accept_len.add(r.accept_len, w)
        if r.accept_rate is not None:
            # vLLM/llama.cpp rates are accepted/drafted: weight by drafted tokens.
            self.accept_rate.add(r.accept_rate, float(r.drafted) if r.drafted else w)
        if r.throughput is not None:
            self.throughput.add(r.throughput)
        if r.running_req is not None:
            self.running_req.add(float(r.running_req))
        if r.accept_len_derived is not None:
            self.accept_len_derived.add(r.accept_len_derived, r.num_drafts)
        if r.accept_rate_derived is not None:
            self.accept_rate_derived.add(r.accept_rate_derived, r.num_drafts)
        if not r.cumulative:
            if r.accepted is not None:
                self.accepted += r.accepted
            if r.drafted is not None:
                self.drafted += r.drafted
        if r.per_position and r.num_drafts and len(r.per_position) <= MAX_POSITIONS:
            pp = r.per_position
            if len(self._pos_sums) < len(pp):
                self._pos_sums.extend([0.0] * (len(pp) - len(self._pos_sums)))
            for i, v in enumerate(pp):
                if math.isfinite(v):
                    self._pos_sums[i] += v * r.num_drafts
            self._pos_weight += r.num_drafts
        if r.timestamp is not None:
            if self.first_ts is None:
                self.first_ts = r.timestamp
            self.last_ts = r.timestamp

    def add_columns(
        self, n_records: int, cols: Columns, first_ts: float | None, last_ts: float | None
    ) -> None:
        """Bulk form of :meth:`add` for SGLang decode records that all print accept len,
        accept rate, throughput and #running-req (the fast scanner's output, see
        :mod:`tui.core.parsing.fastscan`)."""
        al, ar, tp, run = cols
        self.records += n_records
        self.accept_len.merge_chunk(al)
        self.accept_rate.merge_chunk(ar)
        self.throughput.merge_chunk(tp)
        self.running_req.merge_chunk(run)
        if first_ts is not None:
            if self.first_ts is None:
                self.first_ts = first_ts
            self.last_ts = last_ts

    def per_position(self) -> list[float] | None:
        if not self._pos_weight:
            return None
        return [s / self._pos_weight for s in self._pos_sums]

    def to_dict(self, rate_transform: tuple[float, float] | None = None) -> dict:
        d = {
            "records": self.records,
            "accept_len": self.accept_len.to_dict(),
            "accept_rate": self.accept_rate.to_dict(),
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
        return d
