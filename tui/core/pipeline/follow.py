"""Following sources headless: one :class:`Followed` per source holds its parser, statistics and
state, fed batch by batch exactly as ``specwatch stream`` feeds them (``stream``, ``export`` and
``summary`` of metrics sources share it, so their numbers are the same).

State, as the latest event says it: ``connecting`` (nothing yet), ``live`` (lines arrive or the
source is open), ``idle``, ``waiting`` (the file is not there), ``reconnecting``, ``error`` (a
fatal error, or a non-fatal one not yet followed by data) and ``ended``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing

from tui.core.formats import LineParser
from tui.core.model.records import Item, Marker, Record
from tui.core.sources.base import Batch, EventKind, LineBatch, Source, SourceEvent
from tui.core.sources.merge import merged
from tui.core.stats import SourceStats

STATES = ("connecting", "live", "idle", "waiting", "reconnecting", "error", "ended")
_EVENT_STATE = {
    EventKind.OPENED: "live",
    EventKind.CONNECTED: "live",
    EventKind.IDLE: "idle",
    EventKind.WAITING: "waiting",
    EventKind.RECONNECTING: "reconnecting",
    EventKind.EOF: "ended",
    EventKind.SEEK: "live",
}
MAX_ARRIVALS = 4096


class Followed:
    """One source's parser, statistics and state."""

    def __init__(self, name: str, label: str | None = None, *, track_arrivals: bool = False) -> None:
        self.name = name
        self.label = label or name
        self.parser = LineParser(name)
        self.stats = SourceStats(name, self.label)
        self.error: str | None = None  # the fatal error, when the source failed
        self.state = "connecting"
        self.state_message = ""
        self.lines = 0
        self.last_record: float | None = None  # time.monotonic() when the newest record arrived
        # (segment index, rank or None for the segment) -> time.monotonic() of the newest record
        self.arrivals: dict[tuple[int, str | None], float] | None = {} if track_arrivals else None

    def reset(self) -> None:
        self.parser, self.stats = LineParser(self.name), SourceStats(self.name, self.label)
        if self.arrivals is not None:
            self.arrivals.clear()

    def apply(self, batch: Batch) -> list[tuple[Item, int]]:
        """Feed one batch; returns the items it held, each with the segment it went to."""
        if isinstance(batch, SourceEvent):
            self.apply_event(batch)
            return []
        return self.apply_lines(batch)

    def apply_event(self, ev: SourceEvent) -> None:
        if ev.kind == EventKind.SEEK and ev.data.get("reset"):
            self.reset()
        elif ev.changes_file:  # the new file's lines do not continue the old one's (same segment)
            self.parser.reset()
        if ev.kind == EventKind.OPENED and isinstance(ev.data.get("mtime"), (int, float)):
            self.parser.set_reference(float(ev.data["mtime"]))  # a local file: vLLM's year is its year
        self.stats.on_event(ev)
        if ev.kind == EventKind.ERROR:
            if ev.data.get("fatal"):
                self.error = ev.message
            self.state, self.state_message = "error", ev.message
        elif ev.kind == EventKind.EXITED:
            if ev.data.get("returncode"):  # the source's own error text comes with finished()
                self.state, self.state_message = "error", ev.message
            elif self.state != "error":
                self.state, self.state_message = "ended", ev.message
        elif ev.kind in _EVENT_STATE and not (self.error and ev.kind == EventKind.EOF):
            self.state, self.state_message = _EVENT_STATE[ev.kind], ev.message

    def apply_lines(self, batch: LineBatch) -> list[tuple[Item, int]]:
        self.lines += len(batch.lines)
        if self.error is None and self.state != "ended":
            self.state, self.state_message = "live", ""
        items = self.parser.feed_batch(batch)
        if not items:
            return []
        out: list[tuple[Item, int]] = []
        start = 0
        for i, it in enumerate(items):  # between markers, items go in together (runs of columns)
            if isinstance(it, Marker):
                self._feed(items[start:i], out)
                self._feed(items[i : i + 1], out)
                start = i + 1
        self._feed(items[start:], out)
        if any(isinstance(it, Record) for it, _ in out):
            now = time.monotonic()
            self.last_record = now
            if self.arrivals is not None:
                self._arrived(out, now)
        return out

    def _feed(self, items: list[Item], out: list[tuple[Item, int]]) -> None:
        """Items with no marker among them (or one marker alone): one segment for all."""
        if items:
            self.stats.feed(items)
            seg = self.stats.segment_index
            out.extend((it, seg) for it in items)

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

    def finished(self, error: str | None = None) -> None:
        """The source's iterator ended (``error``: the source's own ``error`` attribute)."""
        if error and self.error is None:
            self.error = error
            self.state, self.state_message = "error", error
        elif self.error is None:
            self.state = "ended"


async def follow(
    sources: Sequence[Source], states: Sequence[Followed]
) -> AsyncGenerator[tuple[int, Batch, list[tuple[Item, int]]]]:
    """Runs the sources together, feeds each batch to its state and yields ``(index, batch,
    items)``; returns when every source has ended (their states then say how)."""
    gen = merged(sources)  # an async generator
    async with aclosing(gen) as batches:
        async for i, batch in batches:
            if batch is None:
                states[i].finished(getattr(sources[i], "error", None))
                continue
            yield i, batch, states[i].apply(batch)
