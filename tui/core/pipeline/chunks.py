"""What ``summary`` reads: whole-line chunks of a stream (:func:`iter_chunks`, oversized lines
skipped and counted) and a scanned chunk made ready for folding (:class:`Ready`: its runs already
reduced for the statistics). The scanning threads of large files: ``ranges.py``.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, overload

from tui.core.formats import registry
from tui.core.formats.scan_shapes import Edge, Scan
from tui.core.model.columns import RecordColumns
from tui.core.model.stop import interruptible
from tui.core.sources.base import MAX_LINE_BYTES

if TYPE_CHECKING:
    from tui.core.stats.precompute import Precomputed

READ_CHUNK = 4 << 20  # iter_chunks' default read size


@dataclass(slots=True)
class Ready:
    """A scanned chunk made ready for folding (its runs precomputed)."""

    lines: int
    records: int
    family: str | None
    edge: Edge | None  # what the chunk's records need settled against the lines before it
    head: RecordColumns | None  # the first record, when it may pair with a line of the chunk before
    # the other records, in line order, each with its reduction (None: left to the statistics)
    runs: list[tuple[RecordColumns, Precomputed | None]]
    elapsed: tuple[float, float] | None = None  # first and last time since the server started


def prepare(sc: Scan) -> Ready:
    """Split off the head record that the chunk before settles, and do the statistics' per-value
    work on each run (:func:`precompute`, its result kept beside the run; in a scanning thread,
    mostly in native code without the GIL) so that folding only merges."""
    head = None
    runs = []
    for i, rc in enumerate(sc.runs):
        if i == 0 and rc.n and sc.edge is not None and sc.edge.head_unpaired:
            head, rc = rc.slice(0, 1), rc.slice(1, rc.n)
        runs.append((rc, _precompute(rc)))
    family = sc.runs[0].family if sc.runs else None
    elapsed = None
    stamps = [
        x
        for rc in sc.runs
        for x in (rc.values["elapsed"] if registry.get(rc.family).elapsed_clock else ())
        if x == x
    ]
    if stamps:
        elapsed = (stamps[0], stamps[-1])
    return Ready(sc.lines, sum(rc.n for rc in sc.runs), family, sc.edge, head, runs, elapsed)


def _precompute(rc: RecordColumns) -> Precomputed | None:
    # imported here: a scanner can start reading before the statistics are loaded (see
    # ScanThreads), and the statistics load while it reads
    from tui.core.stats.precompute import precompute

    return precompute(rc)


def absolute(rc: RecordColumns, base: int) -> RecordColumns:
    """``rc`` with its line numbers (counted from the start of its chunk) counted from the start
    of the source, ``base`` lines before the chunk."""
    rc.line_base = base
    return rc


class ChunkLines(Sequence[str]):
    """The text of a run's lines, as the line parser keeps it (``Record.raw``), read from the
    chunk only when asked for (the statistics quote a refused value's line). ``chunk()`` gives
    the chunk's bytes; ``line_nos`` are counted from the chunk's start."""

    def __init__(self, chunk: Callable[[], bytes], line_nos: array) -> None:
        self._chunk, self._nos = chunk, line_nos

    def __len__(self) -> int:
        return len(self._nos)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        buf = self._chunk()
        start = 0
        for _ in range(int(self._nos[i]) - 1):
            start = buf.index(b"\n", start) + 1
        end = buf.find(b"\n", start)
        line = buf[start : len(buf) if end < 0 else end].decode("utf-8", "replace")
        return line[:-1] if line.endswith("\r") else line


class _Readable(Protocol):
    def read(self, n: int = ..., /) -> bytes: ...


class _Findable(Protocol):
    def __len__(self) -> int: ...
    def find(self, sub: bytes, start: int = ..., end: int = ...) -> int: ...
    def rfind(self, sub: bytes, start: int = ..., end: int = ...) -> int: ...


def has_oversized(buf: _Findable, lo: int = 0, hi: int | None = None) -> bool:
    """True when a line of ``buf[lo:hi]`` is longer than MAX_LINE_BYTES (``buf``: bytes or a
    mapping; ``lo`` a line start, ``hi`` a line end).

    Such a line holds a whole aligned block of MAX_LINE_BYTES / 2 bytes without a newline, so
    one ``find`` per block (8 for a 4 MiB chunk) rules it out; a block without a newline is then
    measured exactly."""
    n = len(buf) if hi is None else hi
    half = MAX_LINE_BYTES // 2
    for a in range(lo, n, half) if n - lo > MAX_LINE_BYTES else ():
        b = min(a + half, n)
        if buf.find(b"\n", a, b) >= 0:
            continue
        start = max(lo, buf.rfind(b"\n", lo, a) + 1)
        end = buf.find(b"\n", b, n)
        if (n if end < 0 else end) - start > MAX_LINE_BYTES:
            return True
    return False


class Limited:
    """The next ``left`` bytes of ``f``, read like a file (a part of a file: a time window's)."""

    def __init__(self, f: _Readable, left: int) -> None:
        self.f, self.left = f, left

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(self.left if n < 0 else min(n, self.left))
        self.left -= len(data)
        return data


def iter_chunks(
    f: _Readable,
    size: int | None = None,
    on_oversized: Callable[[int, int, bool], None] | None = None,
    start: int = 0,
) -> Iterator[tuple[int, bytes]]:
    """(offset, buffer of whole lines), reading ``f`` once.

    A line longer than ``MAX_LINE_BYTES`` is never handed over: its bytes are skipped and
    counted, and ``on_oversized(offset, length, newline)`` is called in its place (in order, between the
    buffers before and after it): memory stays bounded, and every line counts once. A last line
    without a newline gets one. Offsets count from ``start`` (where ``f`` is).
    """
    size = size or READ_CHUNK
    offset = start
    rest = b""
    skipping = -1  # bytes of the oversized line being skipped (-1: none)
    skip_start = 0
    while True:
        with interruptible():  # a stop signal: between two chunks, or at once in a read that waits
            data = f.read(size)
        if not data:
            break
        if skipping >= 0:
            nl = data.find(b"\n")
            if nl < 0:
                skipping += len(data)
                offset += len(data)
                continue
            if on_oversized is not None:
                on_oversized(skip_start, skipping + nl, True)
            offset += nl + 1
            data = data[nl + 1 :]
            skipping = -1
            if not data:
                continue
        buf = rest + data if rest else data
        cut = buf.rfind(b"\n") + 1
        if cut:
            yield offset, buf[:cut]
            offset += cut
            rest = buf[cut:]
        else:
            rest = buf
        if len(rest) > MAX_LINE_BYTES:
            skip_start, skipping = offset, len(rest)
            offset += len(rest)
            rest = b""
    if skipping >= 0 and on_oversized is not None:
        on_oversized(skip_start, skipping, False)
    if rest:
        yield offset, rest + b"\n"


def without_timestamps(rc: RecordColumns) -> RecordColumns:
    """``rc`` with no timestamp (year-less stamps of an unknown year); its reduction, made with the
    timestamps, no longer fits it."""
    if not rc.n:
        return rc
    values = dict(rc.values)
    values["timestamp"] = _nan_column(rc.n)
    return RecordColumns(
        rc.family,
        rc.kind,
        rc.n,
        values,
        rc.ranks,
        rc.per_position,
        rc.rate_definition,
        rc.cumulative,
        rc.line_nos,
        rc.lines,
        printed_nan=rc.printed_nan,
        line_base=rc.line_base,
        step_hist=rc.step_hist,
    )


def _nan_column(n: int) -> array:
    return array("d", [math.nan]) * n
