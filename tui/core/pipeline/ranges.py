"""The scanning threads of ``summary`` for large files: the file cut into ranges at line ends
(:func:`ranges`, sized by :func:`range_size`), each range scanned in parts by a thread
(:func:`scan_range`, :class:`ScanThreads`), and how many threads the memory budget allows
(:func:`workers`)."""

from __future__ import annotations

import os
import threading
from _queue import SimpleQueue
from dataclasses import dataclass
from typing import BinaryIO

from tui.core.formats.fastscan import Scan, anchor_lines, line_end, refused_at, scan_chunk
from tui.core.model.stop import interruptible
from tui.core.pipeline.chunks import READ_CHUNK, Ready, has_oversized, prepare
from tui.core.sources.base import MAX_LINE_BYTES


@dataclass(slots=True)
class Part:
    """A piece of a range, in order: scanned (``scan``, then ``ready`` once its runs are reduced
    by :func:`finish`) or left to the line parser (both None)."""

    start: int  # file offsets
    end: int
    scan: Scan | None
    ready: Ready | None = None


def finish(parts: list[Part]) -> list[Part]:
    """The scanned parts' runs reduced for the statistics (:func:`prepare`)."""
    for p in parts:
        if p.scan is not None:
            p.ready, p.scan = prepare(p.scan), None
    return parts


MAX_PARTS = 16  # a range with more lines the scanner cannot read goes to the line parser whole


def scan_range(fd: int, start: int, end: int, year: int, into: bytearray | None = None) -> list[Part]:
    """Scan [start, end) of the file open as ``fd`` (called in a scanning thread), read with one
    ``preadv`` into ``into`` (the thread's buffer, grown as needed and used again for its next
    range: no fresh pages to fault in per range), or into a new buffer. The bytes are a copy
    that nothing can take away: a file truncated meanwhile gives a shorter read, never a fault.
    The parts of the range in order (see :func:`scan_parts`; they keep no reference to the
    buffer); the whole range as one part for the line parser when a line in it is oversized (it
    counts that line); none when the file now ends before the range. A range that the file now
    ends inside is read as far as it goes, its last line given a newline."""
    size = end - start
    buf = into if into is not None else bytearray()
    if len(buf) < size + 1:
        buf.extend(bytes(size + 1 - len(buf)))
    with memoryview(buf) as whole, whole[:size] as target:
        n = _read_into(fd, target, start)
        if not n:
            return []
        if buf[n - 1] != 10:  # b"\n"
            buf[n] = 10
            n += 1
        if has_oversized(buf, 0, n):
            return [Part(start, start + n, None)]
        with whole[:n] as view:
            return scan_parts(view, year, start)


def _read_into(fd: int, target: memoryview, offset: int) -> int:
    if hasattr(os, "preadv"):
        return os.preadv(fd, [target], offset)
    data = os.pread(fd, len(target), offset)  # where preadv is missing: one more copy
    target[: len(data)] = data
    return len(data)


def scan_parts(view: memoryview, year: int, offset: int, refused: bool = False) -> list[Part]:
    """The whole lines of ``view`` (at file ``offset``) scanned, in parts: where the scanner
    stops at a line it cannot read (a restart's args dump, a malformed line), the lines before
    it are scanned, that line is left to the line parser, and the scan goes on after it. The
    reader folds the parts in order, exactly as if it had read the lines one by one.
    ``refused``: the caller's ``scan_chunk`` of the whole view gave None (not scanned again)."""
    n = len(view)
    parts: list[Part] = []
    pos = 0
    while pos < n:
        with view[pos:] as rest:
            sc = None if refused and pos == 0 else scan_chunk(rest, year)
            if sc is not None:
                parts.append(Part(offset + pos, offset + n, sc))
                break
            bad = refused_at(rest, year)
            if bad < 0 or len(parts) >= MAX_PARTS:
                _slow_part(parts, offset + pos, offset + n)
                break
            if bad > 0:
                with rest[:bad] as head:
                    sc = scan_chunk(head, year)
                if sc is None:
                    _slow_part(parts, offset + pos, offset + pos + bad)
                else:
                    parts.append(Part(offset + pos, offset + pos + bad, sc))
            nl = line_end(rest, bad)
        _slow_part(parts, offset + pos + bad, offset + pos + nl)
        pos += nl
    return parts


def _slow_part(parts: list[Part], start: int, end: int) -> None:
    """Lines for the line parser, joined to the part before when that one is too."""
    if parts and parts[-1].scan is None and parts[-1].end == start:
        parts[-1].end = end
    else:
        parts.append(Part(start, end, None))


class Pending:
    """The result of one submitted range, once a scanning thread has it."""

    __slots__ = ("_done", "_value", "_error")

    def __init__(self) -> None:
        self._done = threading.Lock()
        self._done.acquire()
        self._value: list[Part] = []
        self._error: BaseException | None = None

    def get(self) -> list[Part]:
        """Wait for the result (interruptible: a stop signal reaches the waiting thread)."""
        with interruptible():
            self._done.acquire()
        self._done.release()
        if self._error is not None:
            raise self._error
        return self._value


class ScanThreads:
    """``n`` daemon threads scanning submitted ranges of the file open as ``fd``; results are
    read back with :meth:`Pending.get` (summary reads them in file order).

    A thread scans a range (:func:`scan_range`: native code, no import needed) at once, but
    reduces its runs (:func:`finish`, which needs the statistics) only after :meth:`open_gate`:
    the caller loads the statistics meanwhile, so start-up and scanning overlap, and a thread
    never imports a module that the caller may be importing. :meth:`close` drops the ranges not
    begun; being daemons, the threads never hold the process up."""

    def __init__(self, n: int, fd: int, year: int) -> None:
        self._fd, self._year = fd, year
        self._gate = threading.Event()
        self._tasks: SimpleQueue = SimpleQueue()
        self._closed = False
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(max(1, n))]
        for t in self._threads:
            t.start()

    def submit(self, start: int, end: int) -> Pending:
        p = Pending()
        self._tasks.put((p, start, end))
        return p

    def open_gate(self) -> None:
        self._gate.set()

    def _run(self) -> None:
        buf = bytearray()  # this thread's read buffer (see scan_range)
        while True:
            item = self._tasks.get()
            if item is None:
                return
            p, start, end = item
            try:
                if not self._closed:
                    parts = scan_range(self._fd, start, end, self._year, buf)
                    self._gate.wait()
                    p._value = finish(parts)
            except BaseException as e:  # handed to the reader, raised there
                p._error = e
            finally:
                p._done.release()

    def close(self) -> None:
        self._closed = True
        self._gate.set()
        for _ in self._threads:
            self._tasks.put(None)


RANGE_LINES = 16_000  # lines holding an anchor per range, about: enough to make folding cheap
MAX_RANGE = 12 << 20


def range_size(f: BinaryIO, base: int = READ_CHUNK) -> int:
    """How many bytes a scanning thread reads at a time: ``base``, or up to MAX_RANGE where lines
    holding an anchor are sparse (a vLLM log's HTTP access lines between its metrics lines), so
    that each range carries about RANGE_LINES records to fold (folding costs per range, not per
    record). Judged on the file's first ``base`` bytes alone, so that a file is always cut the
    same way (the last bits of some sums depend on where the cuts are)."""
    head = os.pread(f.fileno(), base, 0)
    anchored = max(1, len(anchor_lines(head)))
    return max(base, min(base * RANGE_LINES // anchored, MAX_RANGE))


def ranges(f: BinaryIO, size: int, start: int = 0, total: int | None = None) -> list[tuple[int, int]] | None:
    """Chunk boundaries at line ends: [start, end) pairs covering the file (from the line start
    ``start`` to ``total``, by default its end); None when a line at a boundary is longer than a
    line may be (the caller then reads the file in order)."""
    if total is None:
        total = os.fstat(f.fileno()).st_size
    out = []
    while start < total:
        end = min(start + size, total)
        if end < total:
            nl = _next_newline(f, end, total)
            if nl is None:
                return None
            end = nl + 1 if nl >= 0 else total
        out.append((start, end))
        start = end
    return out


def _next_newline(f: BinaryIO, pos: int, total: int) -> int | None:
    """The offset of the first newline at or after ``pos`` within MAX_LINE_BYTES; -1 when the
    file ends first without one; None when none is within MAX_LINE_BYTES. Read in growing steps:
    a line is short, and a boundary costs one small read, not MAX_LINE_BYTES."""
    step, seen = 1 << 12, 0
    f.seek(pos)
    while seen < MAX_LINE_BYTES:
        tail = f.read(min(step, MAX_LINE_BYTES - seen))
        nl = tail.find(b"\n")
        if nl >= 0:
            return pos + seen + nl
        seen += len(tail)
        if not tail or pos + seen >= total:
            return -1
        step *= 4
    return None


# What one scanning thread and the rest of the process cost at their peak (max RSS of
# summarize_file in-process, 2026-12-04: on the 5M-line SGLang log, ranges of 4 MiB and about
# 18k records each, 46 MB with 1 thread, 63 with 2, 118 with 5, 136 with 6, 186 with 9: about
# 29 + 17.5 per thread; on the 3M-line vLLM log, sparse, ranges of 10 MiB: 37 with 1, 160 with 6).
# A thread holds up to two ranges (the one it reads and its result waiting to be folded):
# WORKER_MB for 4 MiB ranges dense with records, plus the extra bytes of larger ranges (sparse
# logs: their buffer grows, their results are small; the vLLM figures above: 24.6 per thread). MAIN_MB is the 16-core machine's (Python 3.12, the
# bench's max RSS: 202 MB with 9 threads, 154 with 6, about 58 + 16 per thread), where this
# machine's is 29. (Until 2026-12-04: 12 and 40, from older figures, so 9 threads on 16 cores.)
WORKER_MB = 18
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


def workers(range_bytes: int = READ_CHUNK) -> int:
    """One scanning thread per core this process may run on, as many as memory allows: the
    process stays within RSS_BUDGET_MB and within half the memory the system has available."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        n = os.cpu_count() or 1
    budget = float(RSS_BUDGET_MB - MAIN_MB)
    avail = _available_mb()
    if avail is not None:
        budget = min(budget, avail / 2 - MAIN_MB)
    per_thread = WORKER_MB + max(0, range_bytes - READ_CHUNK) / (1 << 20)
    return max(1, min(n, int(budget // per_thread)))
