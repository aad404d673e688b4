"""Headless summary of whole logs: stream each input once, in bounded memory.

Files are read in chunks of whole lines. Each chunk goes through the whole-buffer fast path
(:mod:`tui.core.parsing.fastscan`) when it qualifies and through the line parser otherwise;
large files are scanned by worker processes (one per core, as many as memory allows) while
this process folds the results into the statistics in file order, with a bounded number of
chunks in flight.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import stat
from array import array
from collections import deque
from collections.abc import Iterator
from typing import BinaryIO

from tui.core.columns import RecordColumns
from tui.core.parsing import LineParser
from tui.core.parsing.fastscan import Scan, scan_chunk
from tui.core.records import EngineStats, Record
from tui.core.sources.base import CUT_MARKER, MAX_LINE_BYTES
from tui.core.stats import SourceStats, compare
from tui.core.stats.metrics import MAX_POSITIONS, MetricSet

CHUNK = 4 << 20
PARALLEL_MIN = 48 << 20  # smaller files are faster in one process
SLOW_SLICE = 1 << 20
SPLIT_MIN = 64 << 10  # a refused chunk is halved down to this size


class Summarizer:
    """Folds chunks of one source into its :class:`SourceStats`.

    ``ref_time``: where vLLM's year-less stamps get their year (the file's mtime; None: no
    year known, so those lines get no timestamp).
    """

    def __init__(self, source: str, label: str | None = None, ref_time: float | None = None) -> None:
        self.parser = LineParser(source, ref_time=ref_time)
        self.stats = SourceStats(source, label)
        self.lines = 0
        self.bytes = 0
        self.fast_chunks = 0
        self.slow_chunks = 0
        self.elapsed: tuple[float, float] | None = None  # llama.cpp: first and last elapsed time

    @property
    def can_fast(self) -> bool:
        return self.parser.idle

    @property
    def year(self) -> int:
        """The year to give the scanners for vLLM's year-less stamps (checked when folded)."""
        return self.parser.timestamps.year_hint

    def feed(self, buf: bytes, offset: int, fast: Scan | None) -> None:
        """``fast``: ``scan_chunk(buf, self.year)`` when it was tried, else None."""
        self.bytes += len(buf)
        if fast is None or not self._apply_scan(fast):
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
            fast = scan_chunk(part, self.year) if self.parser.idle else None
            if fast is None or not self._apply_scan(fast):
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
        no = self.lines
        pieces = buf.split(b"\n")
        if pieces and pieces[-1] == b"":
            pieces.pop()
        for raw in pieces:
            no += 1
            if len(raw) > MAX_LINE_BYTES:
                line = raw[:MAX_LINE_BYTES].decode("utf-8", "replace") + CUT_MARKER
            else:
                line = raw.decode("utf-8", "replace")
            if line.endswith("\r"):
                line = line[:-1]
            item = parser.feed(line, no, offset)
            if item is not None:
                stats.feed((item,))
                if isinstance(item, Record) and item.elapsed is not None:
                    first = self.elapsed[0] if self.elapsed else item.elapsed
                    self.elapsed = (first, item.elapsed)
            offset += len(raw) + 1
        self.lines = no

    def _apply_scan(self, sc: Scan) -> bool:
        """Fold a scanned chunk in; False (nothing done) when what its records need from the lines
        before it differs from what the scan assumed (then the caller reads it line by line)."""
        if not self.parser.idle:
            return False
        base = self.lines
        if sc.vllm is not None and not self._settle_vllm(sc):
            return False
        self.fast_chunks += 1
        self.lines += sc.lines
        self.parser.lines += sc.lines
        for rc in sc.runs:
            if rc.line_nos is not None:
                rc.line_nos = array("q", [base + n for n in rc.line_nos])
            if self.parser.family is None:
                self.parser.family = rc.family
            add_columns(self.stats, rc)
        return True

    def _settle_vllm(self, sc: Scan) -> bool:
        """The engine line a chunk's first spec line pairs with may be in the chunk before; the
        year of its stamps is the line parser's. Settle both as the line parser would."""
        edge = sc.vllm
        assert edge is not None
        if edge.first_stamp is not None and edge.last_md is not None:
            settled = self.parser.timestamps.settle_vllm(edge.first_stamp, edge.last_md, edge.year)
            if settled is False:
                return False
            if settled is None:
                for rc in sc.runs:
                    rc.values["timestamp"] = array("d", [math.nan]) * rc.n
        pending = self.parser.vllm_state.pending_engine
        runs = [rc for rc in sc.runs if rc.n]
        if edge.head_unpaired and runs:
            e = pending.get(edge.process)
            if e is not None:
                rc = runs[0]
                rc.values["throughput"][0] = math.nan if e.throughput is None else e.throughput
                rc.values["running_req"][0] = math.nan if e.running_req is None else float(e.running_req)
                if e.engine is not None:
                    if rc.ranks is None:
                        rc.ranks = [None] * rc.n
                    rc.ranks[0] = f"engine {e.engine}"
        if runs:
            pending.pop(edge.process, None)
        if edge.tail_engine is not None:
            eng, tp, run = edge.tail_engine
            pending[edge.process] = EngineStats(
                self.stats.source, 0, 0, eng, None, tp, run, None, None, edge.process
            )
        return True

    def result(self) -> dict:
        d = self.stats.to_dict()
        d["lines"] = self.lines
        d["bytes"] = self.bytes
        d["family"] = self.parser.family
        if self.elapsed is not None:  # llama.cpp prints time since start, not a date
            d["elapsed"] = {"first": format_elapsed(self.elapsed[0]), "last": format_elapsed(self.elapsed[1])}
        return d


def _present(col: array, idx: list[int] | None) -> list[int]:
    rng = range(len(col)) if idx is None else idx
    return [i for i in rng if col[i] == col[i]]


def add_columns(stats: SourceStats, rc: RecordColumns) -> None:
    """The records of ``rc`` into ``stats``: the same as ``stats.feed`` of those records.

    A thin adapter until ``SourceStats.add_columns(cols)`` (the statistics' one entry point)
    exists on this branch: at merge, this function's callers call ``stats.add_columns(rc)``
    instead and this function goes.
    """
    n = rc.n
    if not n:
        return
    seg = stats.current
    stats.records += n
    v = rc.values
    nd, run, dr = v["num_drafts"], v["running_req"], v["drafted"]
    # Record.weight: num_drafts, else #running-req, else drafted tokens, else none
    w = [a if a == a else (b if b == b else (c if c == c else None)) for a, b, c in zip(nd, run, dr)]
    groups: list[tuple[MetricSet, list[int] | None]] = [(stats.total, None), (seg.all, None)]
    if rc.ranks is not None:
        by: dict[str, list[int]] = {}
        for i, r in enumerate(rc.ranks):
            if r is not None:
                by.setdefault(r, []).append(i)
        for r, idx in by.items():
            m = seg.rank_set(r)
            if m is not None:
                groups.append((m, None if len(idx) == n else idx))
    for ms, idx in groups:
        _fold(ms, rc, w, idx)
    if rc.family == "sglang":
        al, ar = v["accept_len"], v["accept_rate"]
        seg.add_rate_pairs((al[i], ar[i]) for i in range(min(n, 4096)) if al[i] == al[i] and ar[i] == ar[i])
    if rc.rate_definition is not None and seg.printed_def is None:
        seg.printed_def = rc.rate_definition
    if not seg.config.family:
        seg.config.family = rc.family
        seg.add_rate_pairs(())  # the rate definition is read again with the family known


def _weights(w: list[float | None], sel: list[int]) -> list[float] | None:
    ws = [w[i] for i in sel]
    if all(x is None for x in ws):
        return None
    return [x if x is not None and 0 < x < math.inf else 0.0 for x in ws]


def _fold(ms: MetricSet, rc: RecordColumns, w: list[float | None], idx: list[int] | None) -> None:
    """MetricSet.add for each record of ``rc`` (those in ``idx``), in bulk."""
    v = rc.values
    ms.records += rc.n if idx is None else len(idx)
    for name, series, weight in (
        ("accept_len", ms.accept_len, "w"),
        ("accept_rate", ms.accept_rate, "drafted"),
        ("throughput", ms.throughput, None),
        ("running_req", ms.running_req, None),
        ("accept_len_derived", ms.accept_len_derived, "num_drafts"),
        ("accept_rate_derived", ms.accept_rate_derived, "num_drafts"),
    ):
        col = v[name]
        sel = _present(col, idx)
        if not sel:
            continue
        xs = [col[i] for i in sel]
        if weight is None:
            series.add_many(xs)
        elif weight == "w":
            series.add_many(xs, _weights(w, sel))
        elif weight == "drafted":  # vLLM / llama.cpp rates are accepted/drafted: drafted tokens
            d = v["drafted"]
            series.add_many(xs, _weights([d[i] if d[i] == d[i] and d[i] else w[i] for i in range(len(w))], sel))
        else:
            c = v[weight]
            series.add_many(xs, _weights([x if x == x else None for x in c], sel))
    if not rc.cumulative:
        for name in ("accepted", "drafted"):
            col = v[name]
            total = int(math.fsum(col[i] for i in _present(col, idx)))
            setattr(ms, name, getattr(ms, name) + total)
    if rc.per_position is not None:
        nd = v["num_drafts"]
        rows = range(rc.n) if idx is None else idx
        sums, weight = ms._pos_sums, 0.0
        for i in rows:
            pp, d = rc.per_position[i], nd[i]
            if not pp or not (d == d and d) or len(pp) > MAX_POSITIONS:
                continue
            if len(sums) < len(pp):
                sums.extend([0.0] * (len(pp) - len(sums)))
            for j, x in enumerate(pp):
                if math.isfinite(x):
                    sums[j] += x * d
            weight += d
        ms._pos_weight += weight
    ts = v["timestamp"]
    stamped = _present(ts, idx)
    if stamped:
        if ms.first_ts is None:
            ms.first_ts = ts[stamped[0]]
        ms.last_ts = ts[stamped[-1]]


def format_elapsed(sec: float) -> str:
    """Seconds since a server started as ``H:MM:SS.mmm`` (never a date)."""
    ms = round(sec * 1000)
    h, rem = divmod(ms, 3_600_000)
    m, rem = divmod(rem, 60_000)
    return f"{h}:{m:02d}:{rem // 1000:02d}.{rem % 1000:03d}"


def iter_chunks(f: BinaryIO, size: int | None = None) -> Iterator[tuple[int, bytes]]:
    """(offset, buffer of whole lines), reading ``f`` once.

    A line longer than ``MAX_LINE_BYTES`` is handed over as its first ``MAX_LINE_BYTES + 1``
    bytes (the line parser cuts it there and says so) and the rest of it is skipped: memory stays
    bounded, and every line counts once. A last line without a newline gets one.
    """
    size = size or CHUNK
    offset = 0
    rest = b""
    skipping = False  # inside an over-long line whose head was already handed over
    while True:
        data = f.read(size)
        if not data:
            break
        if skipping:
            nl = data.find(b"\n")
            if nl < 0:
                offset += len(data)
                continue
            offset += nl + 1
            data = data[nl + 1 :]
            skipping = False
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
            yield offset, rest[: MAX_LINE_BYTES + 1] + b"\n"
            offset += len(rest)
            rest = b""
            skipping = True
    if rest:
        yield offset, rest + b"\n"


# -- worker processes ------------------------------------------------------------------------
_worker_fd: dict[str, int] = {}


def _scan_range(path: str, start: int, end: int, year: int) -> Scan | None:
    fd = _worker_fd.get(path)
    if fd is None:
        fd = _worker_fd[path] = os.open(path, os.O_RDONLY)
    buf = os.pread(fd, end - start, start)
    if not buf.endswith(b"\n"):
        buf += b"\n"
    return scan_chunk(buf, year)


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


# What one worker costs at its peak, counted as the benchmarks count it (its own RSS: the
# interpreter, the modules, a chunk and its scan), and the budget for the whole process tree.
WORKER_MB = 28
MAIN_MB = 45
RSS_BUDGET_MB = 150


def _available_mb() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _workers() -> int:
    """One worker per core this process may run on, as many as memory allows: the tree stays
    within RSS_BUDGET_MB and within half the memory the system has available."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        n = os.cpu_count() or 1
    budget = RSS_BUDGET_MB - MAIN_MB
    avail = _available_mb()
    if avail is not None:
        budget = min(budget, avail / 2 - MAIN_MB)
    return max(1, min(n, int(budget // WORKER_MB)))


def _mtime(f: BinaryIO) -> float | None:
    try:
        return os.fstat(f.fileno()).st_mtime
    except (OSError, ValueError):
        return None


def summarize_file(
    path: str, label: str | None = None, source: str | None = None, workers: int | None = None
) -> Summarizer:
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        s = Summarizer(source or path, label, ref_time=st.st_mtime if stat.S_ISREG(st.st_mode) else None)
        size = st.st_size
        nw = _workers() if workers is None else workers
        ranges = None
        if nw > 1 and size >= PARALLEL_MIN and hasattr(os, "pread") and stat.S_ISREG(st.st_mode):
            ranges = _ranges(f, CHUNK)
            f.seek(0)
        if ranges is None:
            for offset, buf in iter_chunks(f):
                s.feed(buf, offset, scan_chunk(buf, s.year) if s.can_fast else None)
            return s
        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
        year = s.year
        with ctx.Pool(nw) as pool:
            inflight: deque = deque()
            for start, end in ranges:
                inflight.append((start, end, pool.apply_async(_scan_range, (path, start, end, year))))
                if len(inflight) >= 2 * nw:
                    _fold_one(s, f, inflight)
            while inflight:
                _fold_one(s, f, inflight)
    return s


def _fold_one(s: Summarizer, f: BinaryIO, inflight: deque) -> None:
    start, end, res = inflight.popleft()
    fast = res.get()
    if fast is not None and s._apply_scan(fast):
        s.bytes += end - start
        return
    f.seek(start)
    buf = f.read(end - start)
    if not buf.endswith(b"\n"):
        buf += b"\n"
    s.feed(buf, start, None)


def summarize_stream(
    f: BinaryIO, source: str, label: str | None = None, ref_time: float | None = None
) -> Summarizer:
    s = Summarizer(source, label, ref_time=ref_time if ref_time is not None else _mtime(f))
    for offset, buf in iter_chunks(f):
        s.feed(buf, offset, scan_chunk(buf, s.year) if s.can_fast else None)
    return s


def last_measured(stats: SourceStats):
    """The newest segment with accept len values (else the newest segment)."""
    for seg in reversed(stats.segments):
        if seg.all.accept_len.n:
            return seg
    return stats.current


def comparison(a: SourceStats, b: SourceStats) -> dict:
    """B − A on the newest measured segment of each source (the config each runs now)."""
    sa, sb = last_measured(a), last_measured(b)
    out = {
        "a": {"source": a.source, "label": a.label, "segment": sa.index},
        "b": {"source": b.source, "label": b.label, "segment": sb.index},
        "accept_len": compare(sa.all.accept_len, sb.all.accept_len).to_dict(),
    }
    if sa.all.accept_rate.n and sb.all.accept_rate.n:
        da, db = sa.rate_definition().definition, sb.rate_definition().definition
        c = compare(sa.all.accept_rate, sb.all.accept_rate).to_dict()
        c["definitions"] = [da, db]
        if da != db:
            c["note"] = "the two servers print the rate with different definitions; compare accept len"
        out["accept_rate"] = c
    return out


def segment_comparison(stats: SourceStats) -> dict | None:
    """The newest measured segment against the one before it (before/after a restart)."""
    measured = [s for s in stats.segments if s.all.accept_len.n]
    if len(measured) < 2:
        return None
    before, after = measured[-2], measured[-1]
    c = compare(before.all.accept_len, after.all.accept_len).to_dict()
    c["segments"] = [before.index, after.index]
    return c
