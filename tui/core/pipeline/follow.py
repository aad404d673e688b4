"""Following sources headless: one :class:`Followed` per source (a
:class:`tui.core.pipeline.driver.Driver`: its parser, statistics and status), fed batch by batch
by :func:`follow` exactly as ``specwatch stream`` feeds them (``stream``, ``export`` and
``summary`` of metrics sources share it, so their numbers are the same). The status names and
what each event does to them: :mod:`tui.core.pipeline.status`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing

from tui.core.model.records import Item, Record
from tui.core.pipeline.driver import Driver
from tui.core.pipeline.logclock import WALL_MIN, LogClock, local_naive
from tui.core.sources.base import Batch, EventKind, LineBatch, Source, SourceEvent
from tui.core.sources.merge import merged

MAX_ARRIVALS = 4096


class Followed(Driver):
    """One source's driver, with when its newest record arrived and its own stamp (``export``
    shows the ages: :meth:`age`)."""

    def __init__(self, name: str, label: str | None = None, *, track_arrivals: bool = False) -> None:
        super().__init__(name, label)
        self.last_record: float | None = None  # time.monotonic() when the newest record arrived
        # (segment index, rank or None for the segment) -> time.monotonic() of the newest record
        self.arrivals: dict[tuple[int, str | None], float] | None = {} if track_arrivals else None
        # the same keys (None: the source) -> the newest record's own stamp (naive seconds)
        self.stamps: dict[tuple[int, str | None] | None, float] = {}
        self.clock = LogClock()  # whether the log's clock agrees with this machine's

    def reset(self) -> None:
        super().reset()
        self.stamps.clear()
        if self.arrivals is not None:
            self.arrivals.clear()

    def feed(self, batch: Batch) -> list[tuple[Item, int]]:
        out = super().feed(batch)
        if isinstance(batch, SourceEvent):
            if batch.kind == EventKind.OPENED:
                self.clock.opened(batch.data.get("size"), time.monotonic())
            elif batch.changes_file:
                self.clock.file_changed()
        if isinstance(batch, LineBatch) and any(isinstance(it, Record) for it, _ in out):
            now = time.monotonic()
            self.clock.observe(batch, time.time(), now)
            self.last_record = now
            self._stamped(out)
            if self.arrivals is not None:
                self._arrived(out, now)
        return out

    def _stamped(self, out: list[tuple[Item, int]]) -> None:
        for it, seg in out:
            if isinstance(it, Record) and it.timestamp is not None and it.timestamp >= WALL_MIN:
                self.stamps[None] = self.stamps[(seg, None)] = it.timestamp
                if it.rank is not None:
                    self.stamps[(seg, it.rank)] = it.timestamp

    def age(self, key: tuple[int, str | None] | None, now: float) -> float | None:
        """Seconds since the newest record (of segment and rank ``key``; None: of the source) at
        ``now`` (time.monotonic()): by the log's own clock where that is older than the record's
        arrival (an old file read whole, a replay's backlog: "11 days", not "3 s") and the log's
        clock agrees with this machine's (:class:`tui.core.pipeline.logclock.LogClock`), else
        since it arrived. None before the first record."""
        seen = self.last_record if key is None else (self.arrivals or {}).get(key)
        if seen is None:
            return None
        arrival = max(0.0, now - seen)
        stamp = self.stamps.get(key)
        if stamp is None or self.clock.skew is not None:
            return arrival
        wall = time.time() + (now - time.monotonic())
        return max(arrival, local_naive(wall) - stamp)

    def _arrived(self, out: list[tuple[Item, int]], now: float) -> None:
        arr = self.arrivals
        assert arr is not None
        for it, seg in out:
            if isinstance(it, Record):
                arr[(seg, None)] = now
                if it.rank is not None:
                    arr[(seg, it.rank)] = now
        if len(arr) > MAX_ARRIVALS:  # segments long gone: keep the newest
            keep = {s.index for s in self.stats.segments}
            for key in [k for k in arr if k[0] not in keep]:
                del arr[key]
                self.stamps.pop(key, None)


async def follow(
    sources: Sequence[Source], states: Sequence[Driver]
) -> AsyncGenerator[tuple[int, Batch, list[tuple[Item, int]]]]:
    """Runs the sources together, feeds each batch to its driver and yields ``(index, batch,
    items)``; returns when every source has ended (their drivers then say how)."""
    gen = merged(sources)  # an async generator
    async with aclosing(gen) as batches:
        async for i, batch in batches:
            if batch is None:
                states[i].finished(getattr(sources[i], "error", None))
                continue
            yield i, batch, states[i].feed(batch)
