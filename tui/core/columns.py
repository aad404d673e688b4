"""Records as columns: the one shape in which parsed values enter the statistics.

Every reader produces :class:`RecordColumns`: the line parser (from a list of :class:`Record`
through :meth:`RecordColumns.from_records`), the whole-buffer scanners (Python and C) directly.
The statistics take them through one entry point, ``SourceStats.add_columns``; nothing outside
``tui.core.stats`` reaches into the statistics' internals.

A ``RecordColumns`` is a run of consecutive records of one source that belong to one segment
(no marker between them), in line order. Numeric fields are ``array('d')`` of length ``n`` with
NaN where the line did not print the value (NaN never means zero). Counts that are integers on
the line (accepted, drafted, running_req, ...) are stored as doubles: exact up to 2**53.

The contract, checked by the tests: for any input, the columns a fast path builds equal
``RecordColumns.from_records(records)`` of the records the line parser builds from the same
lines (NaN compared as equal).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

from tui.core.records import Record

# The numeric Record fields carried as columns, in this order.
NUMERIC_FIELDS: tuple[str, ...] = (
    "timestamp",
    "accept_len",
    "accept_rate",
    "accepted",
    "drafted",
    "num_drafts",
    "running_req",
    "tokens",
    "token_usage",
    "throughput",
    "queue_req",
    "accept_len_derived",
    "accept_rate_derived",
    "elapsed",  # llama.cpp: seconds since the server started (not a date)
)

NAN = math.nan


def _col(values: Sequence[float | int | None]) -> array:
    return array("d", [NAN if v is None else float(v) for v in values])


@dataclass(slots=True)
class RecordColumns:
    """A run of consecutive records of one segment, column by column.

    ``family`` and ``kind`` are the run's (a run never mixes them: a reader starts a new run when
    either changes). ``ranks`` is None when no record carries a rank tag, else one entry per
    record (None for an untagged record). ``per_position`` is None when no record has one.
    ``rate_definition`` is the definition the records state (vLLM, llama.cpp), else None.
    ``line_nos`` are the records' line numbers (1-based, in the source) when the reader knows
    them; ``lines`` is how many source lines the run covers (records and everything between).
    """

    family: str
    kind: str
    n: int
    values: dict[str, array]
    ranks: list[str | None] | None = None
    per_position: list[tuple[float, ...] | None] | None = None
    rate_definition: str | None = None
    cumulative: bool = False
    line_nos: array | None = None
    lines: int = 0
    extra: dict[str, object] = field(default_factory=dict)

    def col(self, name: str) -> array:
        return self.values[name]

    @classmethod
    def empty(cls, family: str, kind: str) -> RecordColumns:
        return cls(family, kind, 0, {f: array("d") for f in NUMERIC_FIELDS})

    @classmethod
    def from_records(cls, records: Sequence[Record], lines: int = 0) -> RecordColumns:
        """The columns of ``records`` (one family and kind; the caller splits runs)."""
        if not records:
            raise ValueError("no records")
        first = records[0]
        values = {f: _col([getattr(r, f) for r in records]) for f in NUMERIC_FIELDS}
        ranks: list[str | None] | None = [r.rank for r in records]
        if all(x is None for x in ranks):  # type: ignore[union-attr]
            ranks = None
        pp: list[tuple[float, ...] | None] | None = [r.per_position for r in records]
        if all(x is None for x in pp):  # type: ignore[union-attr]
            pp = None
        return cls(
            family=first.family,
            kind=first.kind,
            n=len(records),
            values=values,
            ranks=ranks,
            per_position=pp,
            rate_definition=next((r.rate_definition for r in records if r.rate_definition), None),
            cumulative=any(r.cumulative for r in records),
            line_nos=array("q", [r.line_no for r in records]),
            lines=lines,
        )

    def same_values(self, other: RecordColumns) -> bool:
        """Equal columns (NaN equal to NaN): the fast-path contract."""
        if (self.family, self.kind, self.n, self.ranks, self.per_position) != (
            other.family,
            other.kind,
            other.n,
            other.ranks,
            other.per_position,
        ):
            return False
        for f in NUMERIC_FIELDS:
            a, b = self.values[f], other.values[f]
            if len(a) != len(b):
                return False
            for x, y in zip(a, b):
                if x != y and not (x != x and y != y):
                    return False
        return True
