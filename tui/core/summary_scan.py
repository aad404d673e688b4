"""Where ``summary`` scans: a chunk scanned and reduced for folding (:class:`Ready`), in this
process or in a worker process reading its own range of the file; how many workers to use.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from typing import BinaryIO

from tui.core.columns import RecordColumns
from tui.core.columns_fold import Reduced, reduce_columns, split_first
from tui.core.parsing.fastscan import Scan, VllmEdge, scan_chunk
from tui.core.sources.base import MAX_LINE_BYTES


@dataclass(slots=True)
class Ready:
    """A scanned chunk reduced for folding (where it was scanned: a worker process)."""

    lines: int
    records: int
    family: str | None
    vllm: VllmEdge | None
    head: RecordColumns | None  # the first vLLM record, when it may pair with the chunk before
    reduced: list[Reduced]
    elapsed: tuple[float, float] | None = None  # llama.cpp: first and last elapsed time


def prepare(sc: Scan) -> Ready:
    head = None
    reduced = []
    for i, rc in enumerate(sc.runs):
        if i == 0 and rc.n and sc.vllm is not None and sc.vllm.head_unpaired:
            head, rc = split_first(rc)
        reduced.append(reduce_columns(rc))
    family = sc.runs[0].family if sc.runs else None
    elapsed = None
    stamps = [
        x for rc in sc.runs for x in (rc.values["elapsed"] if rc.family == "llamacpp" else ()) if x == x
    ]
    if stamps:
        elapsed = (stamps[0], stamps[-1])
    return Ready(sc.lines, sum(rc.n for rc in sc.runs), family, sc.vllm, head, reduced, elapsed)


_worker_fd: dict[str, int] = {}


def scan_range(path: str, start: int, end: int, year: int) -> Ready | None:
    """Scan [start, end) of ``path`` through a read-only mapping of just that range (no copy of
    the bytes; unmapped after, so the worker's memory stays one chunk), or a copy when the range
    does not end with a newline or cannot be mapped."""
    fd = _worker_fd.get(path)
    if fd is None:
        fd = _worker_fd[path] = os.open(path, os.O_RDONLY)
    base = start - start % mmap.ALLOCATIONGRANULARITY
    try:
        m = mmap.mmap(fd, end - base, prot=mmap.PROT_READ, offset=base)
    except (OSError, ValueError):
        m = None
    if m is not None:
        with m:
            if m[end - base - 1 : end - base] == b"\n":
                with memoryview(m)[start - base :] as view:
                    return _prepared(scan_chunk(view, year))
    buf = os.pread(fd, end - start, start)
    if not buf.endswith(b"\n"):
        buf += b"\n"
    return _prepared(scan_chunk(buf, year))


def _prepared(sc: Scan | None) -> Ready | None:
    return None if sc is None else prepare(sc)


def ranges(f: BinaryIO, size: int) -> list[tuple[int, int]] | None:
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


# What one worker and the main process cost at their peak, counted as bench/bench_summary.py
# counts them (each process's own RSS, shared pages included: 2 workers measured 33-40 MB each,
# the main process 49-56 MB, on the 3M-line vLLM and 5M-line SGLang logs), and the budget for
# the sum over the process tree.
WORKER_MB = 40
MAIN_MB = 56
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


def workers() -> int:
    """One worker per core this process may run on, as many as memory allows: the tree stays
    within RSS_BUDGET_MB and within half the memory the system has available."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        n = os.cpu_count() or 1
    budget = float(RSS_BUDGET_MB - MAIN_MB)
    avail = _available_mb()
    if avail is not None:
        budget = min(budget, avail / 2 - MAIN_MB)
    return max(1, min(n, int(budget // WORKER_MB)))
