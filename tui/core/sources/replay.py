"""Replay a saved log with its original pacing, under the control of the TUI.

Pacing comes from the line timestamps (:class:`tui.core.formats.timestamps.TimestampReader`:
SGLang, vLLM with its missing year, docker prefixes, ...); a line without one keeps the last one
and lines before the first timestamp are emitted at once. ``speed`` 2.0 plays twice as fast;
``None`` plays as fast as the consumer takes it (one batch per chunk read). A timestamp that
goes backwards (a restarted server with another clock) costs no wait; ``max_gap`` caps the wait
on long gaps (an idle night in the log).

The API the TUI drives (all methods return at once; the source acts on them in order):
``pause()``, ``resume()``, ``toggle_pause()``, ``set_speed(x | None)``, ``step(n, until=)``,
``seek(t)``, ``next_segment()``, ``prev_segment()``. State: ``paused``, ``speed``,
``position`` (log time of the last line emitted), ``line_no`` (the next line), ``progress``.

Jumps keep "the statistics are those of the file up to the playhead" true: a forward jump emits
the lines it passes (fast batches); a backward jump emits a ``seek`` event with
``data["reset"] = True`` (drop this source's state) and replays from the file start to the
target, fast. Segment starts (for next/previous) come from :class:`.replay_index.SegmentIndex`.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import AsyncIterator, Callable
from itertools import islice

from tui.core.formats.timestamps import TimestampReader
from tui.core.sources.base import (
    Batch,
    EventKind,
    GeneratorSource,
    LineBatch,
    SourceEvent,
)
from tui.core.sources.clock import Clock, RealClock
from tui.core.sources.lines import LineSplitter
from tui.core.sources.replay_index import SegmentIndex
from tui.core.sources.replay_input import ReplayInput
from tui.core.sources.window import Window

CHUNK = 1 << 20
MAX_BATCH = 20_000  # lines per batch when paced or stepping (bounded messages)


class ReplaySource(GeneratorSource):
    _anchor: tuple[float, float] | None
    _paused_at: float | None

    def __init__(
        self,
        path: str,
        name: str | None = None,
        *,
        speed: float | None = 1.0,
        clock: Clock | None = None,
        max_gap: float | None = None,
        stay_open: bool = False,
        paused: bool = False,
        paths: list[str] | None = None,
        window: Window | None = None,
    ) -> None:
        """``paths``: the files to read as one log, oldest first (a rotated set; default
        ``[path]``), plain or compressed; ``window``: only the lines between two log times."""
        self.path = os.path.expanduser(path)
        self.paths = [os.path.expanduser(p) for p in paths] if paths else [self.path]
        self.window = window
        self.name = name or path
        self.where = f"replay of {os.path.abspath(self.path)}"
        self.clock: Clock = clock or RealClock()
        self.max_gap = max_gap
        self.stay_open = stay_open
        self.paused = paused
        self.error: str | None = None
        self.seeking = False
        self._speed = self._check_speed(speed)
        self._control = asyncio.Event()
        self._requests: deque[tuple] = deque(maxlen=64)
        self._gen: AsyncIterator[Batch] | None = None
        self._input: ReplayInput | None = None
        self._index: SegmentIndex | None = None
        self._reset_reader()

    # -- control -------------------------------------------------------------------------------
    @staticmethod
    def _check_speed(speed: float | None) -> float | None:
        if speed is not None and not speed > 0:
            raise ValueError(f"replay speed must be > 0 (or None for as fast as possible), not {speed}")
        return None if speed is None or speed == float("inf") else float(speed)

    @property
    def speed(self) -> float | None:
        return self._speed

    def set_speed(self, speed: float | None) -> None:
        speed = self._check_speed(speed)
        log_now = self._log_now()
        self._speed = speed
        self._anchor = (self.clock.now(), log_now) if log_now is not None and not self.paused else None
        self._control.set()

    def pause(self) -> None:
        if not self.paused:
            self._paused_at = self._log_now()
            self.paused = True
        self._control.set()

    def resume(self) -> None:
        if self.paused:
            self.paused = False
            at = self._paused_at
            self._anchor = (self.clock.now(), at) if at is not None else None
            self._paused_at = None
        self._control.set()

    def _log_now(self) -> float | None:
        """The log time the playhead has reached (None when not playing at a speed)."""
        if self.paused:
            return self._paused_at
        if self._anchor is None or self._speed is None:
            return None
        return self._anchor[1] + (self.clock.now() - self._anchor[0]) * self._speed

    def toggle_pause(self) -> None:
        self.resume() if self.paused else self.pause()

    def step(self, lines: int = 1, *, until: Callable[[str], bool] | None = None) -> None:
        """Pause, then emit the next ``lines`` lines (or up to and including the next line for
        which ``until(line)`` is true, e.g. the next metric line)."""
        self.pause()
        self._request(("step", max(1, lines), until))

    def seek(self, log_time: float) -> None:
        """Move the playhead to the first line whose timestamp is >= ``log_time`` (searched from
        the playhead when later than the position, else from the file start)."""
        self._request(("time", float(log_time)))

    def next_segment(self) -> None:
        self._request(("segment", +1))

    def prev_segment(self) -> None:
        """To the start of the segment before the one the playhead (the next line) is in."""
        self._request(("segment", -1))

    def _request(self, req: tuple) -> None:
        self._requests.append(req)
        self._control.set()

    @property
    def line_no(self) -> int:
        """Number of the next line to be emitted."""
        return self._next_no

    @property
    def progress(self) -> float:
        return self._input.progress(self._next_off) if self._input is not None else 0.0

    def progress_at(self, offset: int) -> float:
        """The progress of a reader that has consumed the bytes before ``offset`` (a pane's
        statistics, behind what this source has read ahead)."""
        if self._input is None:
            return 0.0
        return min(self.progress, self._input.progress(offset))

    @property
    def finished(self) -> bool:
        return self._eof and not self._lines

    # -- reading ---------------------------------------------------------------------------------
    def _reset_reader(self) -> None:
        self._splitter = LineSplitter()
        self._ts = TimestampReader()
        self._lines: list[str] = []
        self._offs: list[int] = []
        self._first_no = 1
        self._eof = False
        self._next_no = 1
        self._next_off = 0
        self.position: float | None = None  # log time of the last line emitted
        self._anchor = None  # (wall, log) pacing anchor
        self._paused_at = None

    def _fill(self) -> bool:
        """Loads the next chunk of lines if none are pending; False at the end of the file."""
        while not self._lines:
            if self._eof:
                return False
            assert self._input is not None
            data = self._input.pread(CHUNK, self._splitter.pos)
            lines, offs, first = self._splitter.feed(data) if data else self._splitter.flush()
            if not data:
                self._eof = True
            self._lines, self._offs, self._first_no = lines, offs, first
        return True

    def _take(self, n: int) -> LineBatch:
        lines, offs, first = self._lines[:n], self._offs[:n], self._first_no
        if n >= len(self._lines):
            self._lines, self._offs = [], []
        else:
            del self._lines[:n], self._offs[:n]
        self._first_no = first + n
        self._next_no = first + n
        self._next_off = self._offs[0] if self._offs else self._splitter.line_start
        return LineBatch(self.name, lines, offs, first, self.path)

    def _stamp_last(self, batch: LineBatch) -> None:
        """Position after a fast batch: the timestamp of its last stamped line."""
        for line in reversed(batch.lines[-64:]):
            ts = self._ts.read(line)
            if ts is not None:
                self.position = ts
                return

    def _due(self, now: float, speed: float) -> tuple[int, float | None]:
        """How many pending lines are due at ``now``, and when the first other one is due."""
        n = 0
        read = self._ts.read
        for line in islice(self._lines, MAX_BATCH):
            ts = read(line)
            if ts is not None:
                pos, anchor = self.position, self._anchor
                if anchor is None or pos is None:
                    anchor = (now, ts)  # start, or after a jump: this line is due now
                else:
                    prev_due = anchor[0] + (pos - anchor[1]) / speed  # when the last line was due
                    if ts < pos:
                        anchor = (prev_due, ts)  # the clock went back: no wait
                    elif self.max_gap is not None and ts - pos > self.max_gap:
                        anchor = (prev_due + self.max_gap / speed, ts)
                due = anchor[0] + (ts - anchor[1]) / speed
                if due > now:
                    return n, due  # (the anchor is kept only once a line is emitted under it)
                self._anchor = anchor
                self.position = ts
            n += 1
        return n, None

    # -- the source interface ------------------------------------------------------------------------
    async def _after_close(self) -> None:
        self._close()

    def _close(self) -> None:
        if self._input is not None:
            self._input.close()
            self._input = None
        if self._index is not None:
            self._index.close()
            self._index = None

    def _event(self, kind: EventKind, message: str = "", **data) -> SourceEvent:
        return SourceEvent(self.name, kind, message, self.path, data=data)

    async def _run(self) -> AsyncIterator[Batch]:
        try:
            try:
                self._input = ReplayInput(self.paths, self.window)
            except OSError as exc:
                from tui.core.sources.openfile import describe_oserror

                self.error = describe_oserror(exc, self.path)
                yield self._event(EventKind.ERROR, self.error, fatal=True)
                return
            pace = "as fast as possible" if self._speed is None else f"at {self._speed:g}x"
            yield self._event(
                EventKind.OPENED,
                f"replaying {self.path}{_set_said(self.paths, self.window)} {pace}",
                size=self._input.size,
                mtime=self._input.mtime,
                offset=0,
            )
            eof_said = False
            while True:
                self._control.clear()
                if self._requests:
                    async for b in self._handle(self._requests.popleft()):
                        yield b
                    eof_said = eof_said and self.finished
                    continue
                if not self._fill():
                    if not eof_said:
                        eof_said = True
                        for w in self._input.warnings() if self._input is not None else ():
                            yield self._event(EventKind.ERROR, w, fatal=False)  # a compressed file cut short
                        yield self._event(EventKind.EOF, f"end of {self.path}", offset=self._next_off)
                    if not self.stay_open:
                        return
                    await self.clock.wait(self._control, None)
                    continue
                if self.paused:
                    await self.clock.wait(self._control, None)
                    continue
                speed = self._speed
                if speed is None:
                    start = self._offs[0]
                    batch = self._take(len(self._lines))
                    if self._next_off - start <= 4 * CHUNK:  # the bytes too: a consumer may scan them whole
                        data = self._input.pread(self._next_off - start, start)
                        batch.data = data if data.endswith(b"\n") else data + b"\n"
                    self._stamp_last(batch)
                    self._anchor = None
                    yield batch
                    continue
                n, due = self._due(self.clock.now(), speed)
                if n:
                    yield self._take(n)
                elif due is not None:
                    await self.clock.wait(self._control, due - self.clock.now())
        finally:
            self._close()

    # -- jumps ------------------------------------------------------------------------------------
    async def _handle(self, req: tuple) -> AsyncIterator[Batch]:
        kind = req[0]
        if kind == "step":
            _, count, until = req
            if self._fill():
                n = min(count, len(self._lines), MAX_BATCH)
                if until is not None:
                    n = next(
                        (i + 1 for i, line in enumerate(self._lines[:MAX_BATCH]) if until(line)),
                        min(len(self._lines), MAX_BATCH),
                    )
                batch = self._take(n)
                for line in batch.lines:  # keep the timestamp state in line order
                    ts = self._ts.read(line)
                    if ts is not None:
                        self.position = ts
                self._anchor = None
                self._paused_at = None
                yield batch
            return
        if kind == "time":
            target = req[1]
            forward = self.position is not None and target > self.position
            stop: _TimeStop | _OffsetStop = _TimeStop(target, self._ts)
        else:
            if self._index is None:
                self._index = SegmentIndex(self.path, ReplayInput(self.paths, self.window))
            here = self._next_off
            current = await self._index.segment_at(here)
            found = await self._index.start_of(max(0, current + req[1]))
            if found is None:
                return
            offset, line_no = found
            forward = offset >= here
            stop = _OffsetStop(offset, f"segment {max(0, current + req[1])} (line {line_no})")
        self.seeking = True
        try:
            yield self._event(EventKind.SEEK, f"seeking to {stop}", reset=not forward, target=str(stop))
            if not forward:
                self._reset_reader()
            async for b in self._fast_forward(stop):
                yield b
        finally:
            self.seeking = False
        self._anchor = None
        self._paused_at = None

    async def _fast_forward(self, stop: _TimeStop | _OffsetStop) -> AsyncIterator[Batch]:
        while self._fill():
            n = stop.count(self._lines, self._offs)
            if n:
                batch = self._take(n)
                if isinstance(stop, _TimeStop):
                    self.position = stop.last_ts if stop.last_ts is not None else self.position
                else:
                    self._stamp_last(batch)
                yield batch
            if n < len(self._lines) or stop.done:
                return


class _TimeStop:
    """Stops before the first line stamped >= ``target`` (reads every timestamp in order)."""

    def __init__(self, target: float, reader: TimestampReader) -> None:
        self.target = target
        self.reader = reader
        self.last_ts: float | None = None
        self.done = False

    def count(self, lines: list[str], offs: list[int]) -> int:
        read = self.reader.read
        for i, line in enumerate(lines):
            ts = read(line)
            if ts is not None:
                if ts >= self.target:
                    self.done = True
                    return i
                self.last_ts = ts
        return len(lines)

    def __str__(self) -> str:
        from tui.core.model.records import format_ts

        return f"time {format_ts(self.target)}"


class _OffsetStop:
    def __init__(self, offset: int, what: str) -> None:
        self.offset = offset
        self.what = what
        self.done = False

    def count(self, lines: list[str], offs: list[int]) -> int:
        import bisect

        i = bisect.bisect_left(offs, self.offset)
        if i < len(offs):
            self.done = True
        return i

    def __str__(self) -> str:
        return self.what


def _set_said(paths: list[str], window: Window | None) -> str:
    """`` (4 files, oldest first)``, `` from 14:00 to 15:00``: what a replay reads beyond one file."""
    said = f" ({len(paths)} files, oldest first)" if len(paths) > 1 else ""
    if window:
        w = window.to_dict()
        said += f" from {w['since'] or 'the start'} to {w['until'] or 'the end'}"
    return said
