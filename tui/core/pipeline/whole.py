"""Headless summary of whole logs: stream each input once, in bounded memory.

Files are read in chunks of whole lines. Each chunk goes through the whole-buffer scanners
(:mod:`tui.core.formats.fastscan`) when it qualifies and through the line parser otherwise;
each run of records is reduced for the statistics where it is scanned (natively when the
extensions are built). Large files are scanned by threads (one per core, as many as memory
allows; the scanner and the reduction run without the GIL) while the calling thread folds the
results into the statistics in file order, with a bounded number of ranges in flight. The
parser and the statistics are a :class:`tui.core.pipeline.driver.Driver`'s (whole-file reading is
a mode of the one driver): parsed items go in through :meth:`Driver.fold`, scanned runs (with
their reductions) through :meth:`Driver.add_run`, both to ``SourceStats.add_columns``.
"""

from __future__ import annotations

import io
import os
import stat
from collections import deque
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, BinaryIO

from tui.core.formats import registry
from tui.core.formats.fastscan import Scan, native_scanner, scan_chunk
from tui.core.formats.timestamps import TimestampReader
from tui.core.pipeline.chunks import (
    ChunkLines,
    Limited,
    Ready,
    absolute,
    has_oversized,
    iter_chunks,
    prepare,
    without_timestamps,
)
from tui.core.pipeline.line_reading import LineReading
from tui.core.pipeline.ranges import Part, Pending, ScanThreads, range_size, scan_parts
from tui.core.pipeline.ranges import ranges as scan_ranges
from tui.core.pipeline.ranges import workers as default_workers
from tui.core.sources.compressed import decompressing
from tui.core.sources.window import Cutter, Window

if TYPE_CHECKING:
    from tui.core.model.columns import RecordColumns
    from tui.core.pipeline.driver import Driver
    from tui.core.stats import SourceStats
    from tui.core.stats.precompute import Precomputed

CHUNK = 4 << 20
PARALLEL_MIN = 48 << 20  # smaller files are faster in one process
SPLIT_MIN = 16 << 10  # a refused chunk is halved down to this size


class Summarizer(LineReading):
    """Reads chunks of one source whole into a :class:`Driver` (its parser and statistics).

    ``ref_time``: where year-less stamps get their year (the file's mtime; None: no year
    known, so those lines get no timestamp). ``driver``: the driver to fold into (an app
    pane taking a replay's buffers); by default a new one for ``source``.
    """

    def __init__(
        self,
        source: str,
        label: str | None = None,
        ref_time: float | None = None,
        *,
        driver: Driver | None = None,
    ) -> None:
        if driver is None:  # imported here: the scanning threads start before it loads (summarize_file)
            from tui.core.pipeline.driver import Driver

            driver = Driver(source, label, ref_time=ref_time)
            driver.stats.hold_eras = True  # read whole: each segment's era from its lines (eras.hold)
        self.driver = driver
        self.lines = self.bytes = self.fast_chunks = self.slow_chunks = 0
        self.elapsed: tuple[float, float] | None = None  # first and last time since the server started
        # lines longer than MAX_LINE_BYTES: counted with their length, never parsed
        self.oversized = 0
        self.oversized_bytes = 0
        self.oversized_largest = 0
        self.oversized_examples: list[dict[str, int]] = []
        # the files read, in order (None: not files); the --since/--until window; what reading saw
        self.files: list[dict] | None = None
        self.window: dict | None = None
        self.input_warnings: list[str] = []

    def skip_oversized(self, offset: int, nbytes: int, newline: bool = True) -> None:
        """The next line is an oversized one that the reader skipped (see :func:`iter_chunks`):
        counted, its bytes (and its newline) counted as read."""
        self.lines += 1
        self.parser.lines += 1
        self.bytes += nbytes + newline
        self.add_oversized(self.lines, offset, nbytes)

    @property
    def stats(self) -> SourceStats:
        """What was read, runs held for their era put in (reading uses ``driver.stats``)."""
        self.driver.stats.release_held()
        return self.driver.stats

    @property
    def can_fast(self) -> bool:
        return self.parser.idle

    @property
    def year(self) -> int:
        """The year to give the scanners for year-less stamps (checked when folded)."""
        return self.parser.timestamps.year_hint

    def read(self, buf: bytes, offset: int) -> None:
        """The next chunk of whole lines, in order: scanned fast when the parser is idle (with
        the year it would give year-less stamps), else line by line. The one step every
        whole-file reader takes (local files, streams, rotated sets, SSH, time windows)."""
        self.feed(buf, offset, scan_chunk(buf, self.year) if self.can_fast else None)

    def fold_parts(self, parts: list[Part], read: Callable[[int, int], bytes], counted: bool = False) -> None:
        """A range's parts (:func:`~tui.core.pipeline.ranges.scan_parts`) in order: scanned ones
        folded, the others (or refused) fed line by line; ``read(start, end)``: a part's bytes;
        ``counted``: their bytes are counted already."""
        for part in parts:
            start, end = part.start, part.end
            scanned = part.ready if part.ready is not None else part.scan
            if scanned is not None and self._apply_scan(scanned, partial(read, start, end)):
                if not counted:
                    self.bytes += end - start
            else:
                buf = read(start, end)
                if not counted:
                    self.bytes += len(buf)
                self._halve(buf, start)

    def read_chunks(
        self, chunks: Iterable[tuple[int, bytes]], cutter: Cutter | None = None, stop: bool = True
    ) -> None:
        """Every (offset, chunk) in order through :meth:`read`; with ``cutter``, only the lines
        inside its window (cut as they come; with ``stop``, the reading ends once the window is
        passed, else the rest is read through and cut away)."""
        for offset, buf in chunks:
            if self.read_cut(buf, offset, cutter) and stop:
                break

    def read_cut(self, buf: bytes, offset: int, cutter: Cutter | None) -> bool:
        """The step of every reader's loop (:meth:`read_chunks`; the SSH reader's, asynchronous):
        a chunk through :meth:`read`, only its lines inside ``cutter``'s window. True once the
        window is passed (the rest may be left unread)."""
        if cutter is not None:
            buf = cutter.cut(buf, offset)
        if buf:
            self.read(buf, offset)
        return cutter is not None and cutter.done

    def feed(self, buf: bytes, offset: int, fast: Scan | None) -> None:
        """``fast``: ``scan_chunk(buf, self.year)``, tried whenever the parser is idle (as
        :meth:`read` does); None when it gave None or the parser is not idle. A chunk that holds
        an oversized line goes line by line, where such lines are counted and skipped."""
        self.bytes += len(buf)
        oversized = has_oversized(buf)
        if fast is not None and not oversized and self._apply_scan(fast, _given(buf)):
            return
        if fast is None and not oversized and self.parser.idle and len(buf) > SPLIT_MIN:
            # cut where the scanner stops, as a scanning thread cuts its range: the runs, and so
            # every sum, are the same however many threads read the file
            with memoryview(buf) as view:  # (fast is None: read() scanned it, the parser idle)
                parts = scan_parts(view, self.year, offset, refused=True)
            self.fold_parts(parts, lambda start, end: buf[start - offset : end - offset], counted=True)
        else:
            self._halve(buf, offset)

    def _halve(self, buf: bytes, offset: int) -> None:
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
            fast = scan_chunk(part, self.year) if self.parser.idle and not has_oversized(part) else None
            if fast is None or not self._apply_scan(fast, _given(part)):
                self._halve(part, off)

    def _apply_scan(self, sc: Scan | Ready, chunk: Callable[[], bytes]) -> bool:
        """Fold a scanned chunk in; False (nothing done) when what its records need from the lines
        before it differs from what the scan assumed (then the caller reads it line by line).
        ``chunk()`` gives the chunk's bytes (read only to quote a refused value's line)."""
        if not self.parser.idle:
            return False
        ready = sc if isinstance(sc, Ready) else prepare(sc)
        drop_ts = False
        if ready.edge is not None:
            settled = self._settle(ready)
            if settled is False:
                return False
            drop_ts = settled is None
        self.fast_chunks += 1
        base = self.lines
        self.lines += ready.lines
        self.parser.lines += ready.lines
        if ready.family is not None and self.parser.family is None:
            self.parser.family = ready.family
        if ready.elapsed is not None:
            self.elapsed = (self.elapsed[0] if self.elapsed else ready.elapsed[0], ready.elapsed[1])
        head: list[tuple[RecordColumns, Precomputed | None]] = []
        if ready.head is not None:  # settled by the chunk before: not reduced
            head.append((ready.head, None))
        # (without the timestamps, not the reduction made with them); one era for all the runs
        todo = [(without_timestamps(rc), None) if drop_ts else (rc, r) for rc, r in head + ready.runs]
        self.driver.stats.foresee([rc for rc, _ in todo])
        for rc, reduced in todo:
            rc = absolute(rc, base)
            raws = ChunkLines(chunk, rc.line_nos) if rc.line_nos is not None else None
            self.driver.add_run(rc, raws, reduced)
        runs = [rc for rc, _ in head + ready.runs]
        if runs:  # the family's state, as parsing these lines would have left it
            registry.get(runs[0].family).scanned(self.parser.state_of(runs[0].family), runs)
        return True

    def _settle(self, ready: Ready) -> bool | None:
        """What a chunk's records need from the lines before it (the line its first record pairs
        with, the year of year-less stamps) is the line parser's state: the family's plug-in
        settles it as the line parser would (False: read the chunk line by line; None: the
        records get no timestamp, no year being known)."""
        edge = ready.edge
        assert edge is not None
        fmt = registry.get(edge.family)
        return fmt.settle_scan(
            self.parser.state_of(fmt.name),
            self.parser.timestamps,
            edge,
            ready.head,
            bool(ready.records),
            self.driver.stats.source,
        )

    def result(self) -> dict:
        d = self.stats.to_dict()
        d["lines"] = self.lines
        d["bytes"] = self.bytes
        d["family"] = self.parser.family
        if self.elapsed is not None:  # a family that prints time since start, not a date
            d["elapsed"] = {"first": format_elapsed(self.elapsed[0]), "last": format_elapsed(self.elapsed[1])}
        d["oversized"] = {
            "lines": self.oversized,
            "bytes": self.oversized_bytes,
            "largest": self.oversized_largest,
            "examples": self.oversized_examples,
        }
        d["files"] = self.files
        d["window"] = self.window
        return d


def format_elapsed(sec: float) -> str:
    """Seconds since a server started as ``H:MM:SS.mmm`` (never a date)."""
    ms = round(sec * 1000)
    h, rem = divmod(ms, 3_600_000)
    m, rem = divmod(rem, 60_000)
    return f"{h}:{m:02d}:{rem // 1000:02d}.{rem % 1000:03d}"


def _mtime(f: BinaryIO) -> float | None:
    """A regular file's modification time (a pipe's says nothing about the log's age)."""
    try:
        st = os.fstat(f.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        return None
    return st.st_mtime if stat.S_ISREG(st.st_mode) else None


def summarize_file(
    path: str,
    label: str | None = None,
    source: str | None = None,
    workers: int | None = None,
    region: Callable[[int, int, float | None], tuple[int, int]] | None = None,
    prefix: Callable[[int], tuple[int, bytes] | None] | None = None,
) -> Summarizer:
    """``region(fd, size, ref_time)``: the [start, end) of the file to read (a time window's
    bytes, :func:`tui.core.sources.window.find_range`); by default all of it. ``prefix(fd)``:
    (offset, bytes) read before the region (the startup block before a window: its config)."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        ref_time = st.st_mtime if stat.S_ISREG(st.st_mode) else None
        lo, hi = region(f.fileno(), st.st_size, ref_time) if region is not None else (0, st.st_size)
        ranges = None
        if hi - lo >= PARALLEL_MIN and hasattr(os, "pread") and stat.S_ISREG(st.st_mode):
            step = range_size(f, CHUNK)
            nw = workers if workers is not None else default_workers(step) if native_scanner() else 1
            # (the Python scanner holds the GIL: more threads would only hold more ranges)
            # cut into the same ranges by one thread as by many: the last bits of some sums
            # depend on where the cuts are, never on how many threads read
            ranges = scan_ranges(f, step) if region is None else scan_ranges(f, step, lo, hi)
        if ranges is None:
            s = Summarizer(source or path, label, ref_time=ref_time)
            _feed_prefix(s, f, prefix)
            f.seek(lo)
            limited = f if region is None else Limited(f, hi - lo)
            s.read_chunks(iter_chunks(limited, CHUNK, on_oversized=s.skip_oversized, start=lo))
            return s
        # Threads, not processes: the scanner and the reduction run in native code without the
        # GIL, so the threads scan in parallel while this one folds, with nothing pickled. They
        # start before the line parser and the statistics are loaded (the year they give vLLM's
        # stamps is the one the Summarizer's parser will hint).
        pool = ScanThreads(nw, f.fileno(), TimestampReader(None, ref_time).year_hint)
        try:
            inflight: deque[Pending] = deque()
            todo = iter(ranges)
            for start, end in todo:
                inflight.append(pool.submit(start, end))
                if len(inflight) > nw:
                    break
            s = Summarizer(source or path, label, ref_time=ref_time)
            _feed_prefix(s, f, prefix)
            _load_reduction()
            pool.open_gate()
            for start, end in todo:
                inflight.append(pool.submit(start, end))
                s.fold_parts(inflight.popleft().get(), partial(_read, f))
            while inflight:
                s.fold_parts(inflight.popleft().get(), partial(_read, f))
        finally:  # on Ctrl-C or SIGTERM too: the ranges not begun are dropped
            pool.close()
    return s


def _feed_prefix(
    s: Summarizer, f: BinaryIO, prefix: Callable[[int], tuple[int, bytes] | None] | None
) -> None:
    found = prefix(f.fileno()) if prefix is not None else None
    if found is not None:
        s.read(found[1], found[0])


def _load_reduction() -> None:
    """The statistics' reduction, loaded here before the scanning threads may use it."""
    import tui.core.stats.precompute  # noqa: F401


def _given(buf: bytes) -> Callable[[], bytes]:
    return lambda: buf


def _read(f: BinaryIO, start: int, end: int) -> bytes:
    f.seek(start)
    buf = f.read(end - start)
    return buf if buf.endswith(b"\n") else buf + b"\n"


def summarize_stream(
    f: BinaryIO,
    source: str,
    label: str | None = None,
    ref_time: float | None = None,
    window: Window | None = None,
) -> Summarizer:
    """``f`` read to its end; with ``window``, only its lines inside it (cut as they come)."""
    ref_time = ref_time if ref_time is not None else _mtime(f)
    s = Summarizer(source, label, ref_time=ref_time)
    cutter = Cutter(window, ref_time, context=True) if window else None
    reader, compression = decompressing(f)  # a compressed stream is read decompressed
    s.read_chunks(iter_chunks(reader, CHUNK, on_oversized=s.skip_oversized), cutter, stop=False)
    if window and cutter is not None:
        s.window = {**window.to_dict(), **cutter.report()}
    if compression is not None and reader.problem:
        s.input_warnings.append(f"{source} ({compression}): {reader.problem}; the lines before it were read")
    return s
