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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from tui.core.model.quantities import column_names
from tui.core.model.records import Record

_FIELDS = frozenset(Record.__slots__)

# The built-in column layout (tui.core.model.quantities: every quantity is a column, in registration
# order). Readers that number their columns look each index up here by name; a quantity registered
# later (a family's own) is appended: :func:`column_names` is the whole layout at any time.
NUMERIC_FIELDS: tuple[str, ...] = column_names()

NAN = math.nan


def _col(values: Sequence[float | int | None]) -> array:
    return array("d", [NAN if v is None else float(v) for v in values])


class FlatRows(Sequence[tuple[float, ...]]):
    """Rows of ``k`` floats each (per-position rates with one k throughout), kept as one flat
    ``array('d')`` as the scanners produce them: a row becomes a tuple only when it is read, and
    the statistics read ``flat`` and ``k`` directly. Equal to the list of its rows."""

    __slots__ = ("flat", "k")

    def __init__(self, flat: array, k: int) -> None:
        if k < 1 or len(flat) % k:
            raise ValueError("flat must hold whole rows of k >= 1 values")
        self.flat, self.k = flat, k

    def __len__(self) -> int:
        return len(self.flat) // self.k

    @overload
    def __getitem__(self, i: int) -> tuple[float, ...]: ...
    @overload
    def __getitem__(self, i: slice) -> FlatRows: ...
    def __getitem__(self, i: int | slice) -> tuple[float, ...] | FlatRows:
        k = self.k
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                return FlatRows(array("d", [x for j in range(start, stop, step) for x in self[j]]), k)
            return FlatRows(self.flat[start * k : max(start, stop) * k], k)
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("row index out of range")
        return tuple(self.flat[i * k : (i + 1) * k])

    def __iter__(self) -> Iterator[tuple[float, ...]]:
        return zip(*[iter(self.flat)] * self.k)  # at C speed

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FlatRows):
            return self.k == other.k and self.flat == other.flat
        if isinstance(other, Sequence):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FlatRows({list(self)!r})"


def row_lengths(rows: Sequence[tuple[float, ...] | None] | None) -> set[int]:
    """The lengths of the per-position rows (0 for a record without one), at C speed; FlatRows
    answer from their k."""
    if rows is None:
        return set()
    if isinstance(rows, FlatRows):
        return {rows.k} if len(rows) else set()
    return set(map(len, (r or () for r in rows)))


def flat_rows(rows: Sequence[tuple[float, ...] | None] | None) -> tuple[array, int] | None:
    """The rows as one flat array and their k, when every record has a row of the same k >= 1;
    else None."""
    if isinstance(rows, FlatRows):
        return rows.flat, rows.k
    ks = row_lengths(rows)
    if len(ks) != 1 or 0 in ks:
        return None
    return array("d", [x for r in rows or () for x in r or ()]), ks.pop()


def doubles(raw: bytes) -> array:
    """An ``array('d')`` of the native code's bytes of doubles."""
    a = array("d")
    a.frombytes(raw)
    return a


@dataclass(slots=True)
class RecordColumns:
    """A run of consecutive records of one segment, column by column.

    ``family`` and ``kind`` are the run's (a run never mixes them: a reader starts a new run when
    either changes). ``ranks`` is None when no record carries a rank tag, else one entry per
    record (None for an untagged record). ``per_position`` is None when no record has one.
    ``rate_definition`` is the definition the records state (vLLM, llama.cpp), else None.
    ``line_nos`` are the records' line numbers (1-based) when the reader knows them, counted
    after ``line_base`` lines of the source (a whole-buffer scanner counts from its buffer's
    start; the reader that knows the lines before sets ``line_base``): :meth:`line_no` gives the
    line in the source. ``lines`` is how many source lines the run covers (records and
    everything between).
    """

    family: str
    kind: str
    n: int
    values: dict[str, array]
    ranks: list[str | None] | None = None
    per_position: Sequence[tuple[float, ...] | None] | None = None  # a list, or FlatRows
    rate_definition: str | None = None
    cumulative: bool = False
    line_nos: array | None = None
    lines: int = 0
    # Values printed as "nan" (in a column they look like "not printed"): field -> (count, index
    # of the first). Optional: a reader that never meets one leaves it None.
    printed_nan: dict[str, tuple[int, int]] | None = None
    line_base: int = 0
    # kind "request" only (optional): each record's step histogram, None where not printed
    step_hist: list[tuple[int, ...] | None] | None = None

    def col(self, name: str) -> array:
        """Column ``name``; all NaN (not printed) when the reader did not build it (a quantity
        registered after the run was read)."""
        c = self.values.get(name)
        if c is None:
            c = self.values[name] = array("d", [NAN]) * self.n
        return c

    def line_no(self, i: int) -> int | None:
        """The source line of record ``i``, when known."""
        if self.line_nos is None or not 0 <= i < len(self.line_nos):
            return None
        return self.line_base + int(self.line_nos[i])

    @classmethod
    def empty(cls, family: str, kind: str) -> RecordColumns:
        return cls(family, kind, 0, {f: array("d") for f in column_names()})

    @classmethod
    def from_records(cls, records: Sequence[Record], lines: int = 0) -> RecordColumns:
        """The columns of ``records`` (one family and kind; the caller splits runs)."""
        if not records:
            raise ValueError("no records")
        first = records[0]
        values: dict[str, array] = {}
        printed_nan: dict[str, tuple[int, int]] | None = None
        for f in column_names():
            raw = [getattr(r, f) for r in records] if f in _FIELDS else [r.value(f) for r in records]
            col = values[f] = _col(raw)
            if sum(col) != sum(col):  # some NaN: printed "nan", or not printed at all?
                bad = [i for i, v in enumerate(raw) if v is not None and v != v]
                if bad:
                    printed_nan = printed_nan or {}
                    printed_nan[f] = (len(bad), bad[0])
        ranks: list[str | None] | None = [r.rank for r in records]
        if all(x is None for x in ranks):  # type: ignore[union-attr]
            ranks = None
        pp: list[tuple[float, ...] | None] | None = [r.per_position for r in records]
        if all(x is None for x in pp):  # type: ignore[union-attr]
            pp = None
        sh: list[tuple[int, ...] | None] | None = [r.step_histogram for r in records]
        if all(x is None for x in sh):  # type: ignore[union-attr]
            sh = None
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
            printed_nan=printed_nan,
            step_hist=sh,
        )

    def slice(self, start: int, stop: int) -> RecordColumns:
        """Records ``start`` to ``stop`` (0 <= start <= stop <= n) as a run of their own: what the
        scanners need to settle a chunk's first record apart. ``lines`` stays with the run that
        keeps the end. A run with values printed "nan" is not sliced: their places are not all
        kept (see ``printed_nan``)."""
        if self.printed_nan:
            raise ValueError("a run with values printed 'nan' cannot be sliced")
        ranks = self.ranks[start:stop] if self.ranks is not None else None
        pp = self.per_position[start:stop] if self.per_position is not None else None
        return RecordColumns(
            self.family,
            self.kind,
            stop - start,
            {k: c[start:stop] for k, c in self.values.items()},
            ranks if ranks is not None and any(r is not None for r in ranks) else None,
            pp if pp is not None and any(p is not None for p in pp) else None,
            self.rate_definition,
            self.cumulative,
            self.line_nos[start:stop] if self.line_nos is not None else None,
            self.lines if stop == self.n else 0,
            line_base=self.line_base,
            step_hist=self.step_hist[start:stop] if self.step_hist is not None else None,
        )

    def same_values(self, other: RecordColumns) -> bool:
        """Equal columns (NaN equal to NaN): the fast-path contract."""
        if (self.family, self.kind, self.n, self.ranks, self.per_position, self.step_hist) != (
            other.family,
            other.kind,
            other.n,
            other.ranks,
            other.per_position,
            other.step_hist,
        ):
            return False
        for f in column_names():
            a, b = self.col(f), other.col(f)
            if len(a) != len(b):
                return False
            for x, y in zip(a, b):
                if x != y and not (x != x and y != y):
                    return False
        return True
