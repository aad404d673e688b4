"""Headless summary of whole logs: stream each input once, in bounded memory.

Files are read in chunks of whole lines. Each chunk goes through the whole-buffer fast path
(:mod:`tui.core.parsing.fastscan`) when it qualifies and through the line parser otherwise;
large files are scanned by worker processes (both cores) while this process folds the results
into the statistics in file order, with a bounded number of chunks in flight.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import signal
import stat
from array import array
from collections import deque
from collections.abc import Callable, Iterator
from typing import BinaryIO

from tui.core.columns import NUMERIC_FIELDS, RecordColumns
from tui.core.parsing import LineParser
from tui.core.parsing.fastscan import FastChunk, scan_chunk
from tui.core.sources.base import MAX_LINE_BYTES
from tui.core.stats import SourceStats
from tui.core.stats.compare import POOLED, compare_accept_len, compare_accept_rate
from tui.core.stats.load import compare_load_adjusted
from tui.core.stats.payoff import is_baseline, throughput_ratio
from tui.core.stats.precompute import precompute
from tui.core.stats.segments import Segment

CHUNK = 4 << 20
PARALLEL_MIN = 48 << 20  # smaller files are faster in one process
SLOW_SLICE = 1 << 20
SPLIT_MIN = 64 << 10  # a refused chunk is halved down to this size


class Summarizer:
    """Folds chunks of one source into its :class:`SourceStats`."""

    def __init__(self, source: str, label: str | None = None) -> None:
        self.parser = LineParser(source)
        self.stats = SourceStats(source, label)
        self.lines = 0
        self.bytes = 0
        self.fast_chunks = 0
        self.slow_chunks = 0
        # lines longer than MAX_LINE_BYTES: counted with their length, never parsed
        self.oversized = 0
        self.oversized_bytes = 0
        self.oversized_largest = 0
        self.oversized_examples: list[dict[str, int]] = []

    def add_oversized(self, line_no: int, offset: int, nbytes: int) -> None:
        self.oversized += 1
        self.oversized_bytes += nbytes
        self.oversized_largest = max(self.oversized_largest, nbytes)
        if len(self.oversized_examples) < 20:
            self.oversized_examples.append({"line": line_no, "offset": offset, "bytes": nbytes})

    def skip_oversized(self, offset: int, nbytes: int) -> None:
        """The next line is an oversized one that the reader skipped (see :func:`iter_chunks`)."""
        self.lines += 1
        self.parser.lines += 1
        self.add_oversized(self.lines, offset, nbytes)

    @property
    def can_fast(self) -> bool:
        return self.parser.idle

    def feed(self, buf: bytes, offset: int, fast: FastChunk | None) -> None:
        """``fast``: ``scan_chunk(buf)`` when it was tried, else None. A chunk that holds an
        oversized line goes line by line, where such lines are counted and skipped."""
        self.bytes += len(buf)
        if fast is not None and has_oversized(buf):
            fast = None
        if fast is not None and self.parser.idle:
            self._apply_fast(fast)
        else:
            self._split(buf, offset)

    def _split(self, buf: bytes, offset: int) -> None:
        """A chunk the fast path refused as a whole: most of it is usually canonical, around a
        few lines that are not (a restart's args dump, a malformed line). Halve it until the
        halves qualify or are small; only the small pieces around those lines go line by line.
        The order of everything is kept, so segments and sequences are the same."""
        if len(buf) <= SPLIT_MIN or not self.parser.idle:
            self._slow(buf, offset)
            return
        mid = buf.find(b"\n", len(buf) // 2) + 1
        if mid <= 0 or mid >= len(buf):
            self._slow(buf, offset)
            return
        for part, off in ((buf[:mid], offset), (buf[mid:], offset + mid)):
            fast = scan_chunk(part) if self.parser.idle and not has_oversized(part) else None
            if fast is not None and self.parser.idle:
                self._apply_fast(fast)
            else:
                self._split(part, off)

    def _slow(self, buf: bytes, offset: int) -> None:
        self.slow_chunks += 1
        start = 0
        while start < len(buf):  # in slices of ~1 MiB of lines: bounded transient memory
            end = buf.find(b"\n", min(start + SLOW_SLICE, len(buf) - 1))
            end = len(buf) if end < 0 else end + 1
            self._slow_lines(buf[start:end], offset + start)
            start = end

    def _slow_lines(self, buf: bytes, offset: int) -> None:
        parser, stats = self.parser, self.stats
        items = []  # fed at the end of the slice: runs of records go in as columns
        no = self.lines
        pieces = buf.split(b"\n")
        if pieces and pieces[-1] == b"":
            pieces.pop()
        for raw in pieces:
            no += 1
            if len(raw) > MAX_LINE_BYTES:  # not parsed: only counted, with its length
                parser.lines += 1
                self.add_oversized(no, offset, len(raw))
                offset += len(raw) + 1
                continue
            line = raw.decode("utf-8", "replace")
            if line.endswith("\r"):
                line = line[:-1]
            item = parser.feed(line, no, offset)
            if item is not None:
                items.append(item)
            offset += len(raw) + 1
        stats.feed(items)
        self.lines = no

    def _apply_fast(self, fc: FastChunk) -> None:
        self.fast_chunks += 1
        self.lines += fc.lines
        self.parser.lines += fc.lines
        if not fc.records or fc.values is None:
            return
        cols = fc.columns if isinstance(fc.columns, RecordColumns) else fast_columns(fc)
        self.stats.add_columns(cols)
        if self.parser.family is None:
            self.parser.family = "sglang"

    def result(self) -> dict:
        d = self.stats.to_dict()
        d["lines"] = self.lines
        d["bytes"] = self.bytes
        d["family"] = self.parser.family
        d["oversized"] = {
            "lines": self.oversized,
            "bytes": self.oversized_bytes,
            "largest": self.oversized_largest,
            "examples": self.oversized_examples,
        }
        return d


def fast_columns(fc: FastChunk) -> RecordColumns:
    """The fast path's values as :class:`RecordColumns` (SGLang decode records). The scanner
    keeps only the first and last timestamps, which is all the statistics read of them: the
    records in between carry NaN there."""
    assert fc.values is not None
    run, al, ar, tp, tags = fc.values
    n = fc.records
    cols = RecordColumns.empty("sglang", "decode")
    cols.n, cols.lines = n, fc.lines
    nan = array("d", [math.nan]) * n  # one array for every field not printed (never written to)
    for name in NUMERIC_FIELDS:
        cols.values[name] = nan
    cols.values["running_req"] = array("d", run)
    cols.values["accept_len"] = array("d", al)
    cols.values["accept_rate"] = array("d", ar)
    cols.values["throughput"] = array("d", tp)
    ts = cols.values["timestamp"] = array("d", nan)
    if fc.first_ts is not None:
        ts[0] = fc.first_ts
    if fc.last_ts is not None:
        ts[n - 1] = fc.last_ts
    cols.ranks = [tags] * n if isinstance(tags, str) else list(tags)
    return cols


def has_oversized(buf: bytes) -> bool:
    """True when a line of ``buf`` is longer than MAX_LINE_BYTES.

    Such a line holds a whole aligned block of MAX_LINE_BYTES / 2 bytes without a newline, so
    one ``find`` per block (8 for a 4 MiB chunk) rules it out; a block without a newline is then
    measured exactly."""
    n = len(buf)
    half = MAX_LINE_BYTES // 2
    for a in range(0, n, half) if n > MAX_LINE_BYTES else ():
        b = min(a + half, n)
        if buf.find(b"\n", a, b) >= 0:
            continue
        start = buf.rfind(b"\n", 0, a) + 1
        end = buf.find(b"\n", b)
        if (n if end < 0 else end) - start > MAX_LINE_BYTES:
            return True
    return False


def iter_chunks(
    f: BinaryIO, size: int | None = None, on_oversized: Callable[[int, int], None] | None = None
) -> Iterator[tuple[int, bytes]]:
    """(offset, buffer of whole lines), reading ``f`` once.

    A line longer than ``MAX_LINE_BYTES`` is never handed over: its bytes are skipped and
    counted, and ``on_oversized(offset, length)`` is called in its place (in order, between the
    buffers before and after it): memory stays bounded, and every line counts once. A last line
    without a newline gets one.
    """
    size = size or CHUNK
    offset = 0
    rest = b""
    skipping = -1  # bytes of the oversized line being skipped (-1: none)
    skip_start = 0
    while True:
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
                on_oversized(skip_start, skipping + nl)
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
        on_oversized(skip_start, skipping)
    if rest:
        yield offset, rest + b"\n"


# -- worker processes ------------------------------------------------------------------------
_worker_fd: dict[str, int] = {}


def _worker_signals() -> None:
    """Workers leave Ctrl-C (sent to the whole process group) to the parent, which terminates
    the pool (SIGTERM, default action: no traceback in the workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _scan_range(path: str, start: int, end: int) -> FastChunk | None:
    fd = _worker_fd.get(path)
    if fd is None:
        fd = _worker_fd[path] = os.open(path, os.O_RDONLY)
    buf = os.pread(fd, end - start, start)
    if not buf.endswith(b"\n"):
        buf += b"\n"
    if has_oversized(buf):  # the parent reads it line by line and counts the oversized line
        return None
    fc = scan_chunk(buf)
    if fc is not None and fc.records and fc.values is not None:  # the statistics' heavy half, here
        fc.columns = fast_columns(fc)
        precompute(fc.columns)
        fc.cols, fc.by_rank, fc.values = None, {}, (None, None, None, None, "")
    return fc


def _ranges(f: BinaryIO, size: int) -> list[tuple[int, int]] | None:
    """Chunk boundaries at line ends: [start, end) pairs covering the file; None when a line
    at a boundary is longer than a line may be (the caller then reads the file in order)."""
    total = os.fstat(f.fileno()).st_size
    out = []
    start = 0
    while start < total:
        end = min(start + size, total)
        if end < total:
            f.seek(end)
            tail = f.read(MAX_LINE_BYTES)
            nl = tail.find(b"\n")
            if nl < 0 and end + len(tail) < total:
                return None
            end = end + nl + 1 if nl >= 0 else total
        out.append((start, end))
        start = end
    return out


def _workers() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:
        n = os.cpu_count() or 1
    return max(1, min(n, 4))


def summarize_file(
    path: str, label: str | None = None, source: str | None = None, workers: int | None = None
) -> Summarizer:
    s = Summarizer(source or path, label)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        nw = _workers() if workers is None else workers
        ranges = None
        if (
            nw > 1
            and size >= PARALLEL_MIN
            and hasattr(os, "pread")
            and stat.S_ISREG(os.fstat(f.fileno()).st_mode)
        ):
            ranges = _ranges(f, CHUNK)
            f.seek(0)
        if ranges is None:
            for offset, buf in iter_chunks(f, on_oversized=s.skip_oversized):
                s.feed(buf, offset, scan_chunk(buf) if s.can_fast else None)
            return s
        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
        with ctx.Pool(nw, initializer=_worker_signals) as pool:
            inflight: deque = deque()
            for start, end in ranges:
                inflight.append((start, end, pool.apply_async(_scan_range, (path, start, end))))
                if len(inflight) >= 2 * nw:
                    _fold_one(s, f, inflight)
            while inflight:
                _fold_one(s, f, inflight)
    return s


def _fold_one(s: Summarizer, f: BinaryIO, inflight: deque) -> None:
    start, end, res = inflight.popleft()
    fast = res.get()
    if fast is not None and s.can_fast:
        s.bytes += end - start
        s._apply_fast(fast)
        return
    f.seek(start)
    buf = f.read(end - start)
    if not buf.endswith(b"\n"):
        buf += b"\n"
    s.feed(buf, start, None)


def summarize_stream(f: BinaryIO, source: str, label: str | None = None) -> Summarizer:
    s = Summarizer(source, label)
    for offset, buf in iter_chunks(f, on_oversized=s.skip_oversized):
        s.feed(buf, offset, scan_chunk(buf) if s.can_fast else None)
    return s


def last_measured(stats: SourceStats) -> Segment:
    """The newest segment with acceptance values (else the newest segment)."""
    for seg in reversed(stats.segments):
        if seg.all.accept_len.n or seg.all.pooled_len.n:
            return seg
    return stats.current


def comparison(a: SourceStats, b: SourceStats) -> dict:
    """B − A on the newest measured segment of each source (the config each runs now)."""
    sa, sb = last_measured(a), last_measured(b)
    out = {
        "a": {"source": a.source, "label": a.label, "segment": sa.index},
        "b": {"source": b.source, "label": b.label, "segment": sb.index},
        "accept_len": compare_accept_len(sa.all, sb.all).to_dict(),
        "accept_len_load_adjusted": compare_load_adjusted(
            sa.load, sb.load, sa.all.running_req.mean, sb.all.running_req.mean
        ),
        "throughput": throughput_ratio(
            sa.all.throughput.estimate(),
            sb.all.throughput.estimate(),
            "a" if is_baseline(a.label) else "b" if is_baseline(b.label) else None,
        ),
    }
    if (sa.all.accept_rate.n or sa.all.pooled_rate.n) and (sb.all.accept_rate.n or sb.all.pooled_rate.n):
        da, db = sa.rate_definition().definition, sb.rate_definition().definition
        c = compare_accept_rate(sa.all, sb.all).to_dict()
        c["definitions"] = [da, db]
        if da != db and c["estimator"] != POOLED:
            c["note"] = "the two servers print the rate with different definitions; compare accept len"
        out["accept_rate"] = c
    return out


def segment_comparison(stats: SourceStats) -> dict | None:
    """The newest measured segment against the one before it (before/after a restart)."""
    measured = [s for s in stats.segments if s.all.accept_len.n or s.all.pooled_len.n]
    if len(measured) < 2:
        return None
    before, after = measured[-2], measured[-1]
    c = compare_accept_len(before.all, after.all).to_dict()
    c["segments"] = [before.index, after.index]
    c["accept_len_load_adjusted"] = compare_load_adjusted(
        before.load, after.load, before.all.running_req.mean, after.all.running_req.mean
    )
    return c
