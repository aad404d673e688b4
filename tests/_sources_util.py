"""Helpers for the source tests: run a source in a task and wait for what it emits."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import uuid
from collections.abc import AsyncIterator, Iterable

from _wait import DEADLINE, wait_until_async

from tui.core.sources.base import EventKind, LineBatch, SourceEvent
from tui.core.sources.file import Follower
from tui.core.sources.wakeups import Waker

FAST = dict(poll_interval=0.02, safety_interval=0.2, settle=0.05, idle_after=None)


def seq(i: int) -> str:
    return f"line {i:05d}"


def seq_lines(a: int, b: int) -> str:
    """Lines a..b (inclusive), each with its newline."""
    return "".join(seq(i) + "\n" for i in range(a, b + 1))


class Collector:
    """Consumes a source in a background task; ``wait_for`` waits (with a timeout) for a
    condition on what arrived."""

    def __init__(self, source) -> None:
        self.source = source
        self.items: list[LineBatch | SourceEvent] = []
        self.task: asyncio.Task | None = None
        self.error: BaseException | None = None

    async def __aenter__(self) -> Collector:
        self.task = asyncio.create_task(self._run())
        return self

    async def _run(self) -> None:
        try:
            async for b in self.source:
                self.items.append(b)
        except Exception as exc:  # surfaced by wait_for / the test
            self.error = exc
            raise

    async def __aexit__(self, *exc) -> None:
        assert self.task is not None
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
        await self.source.aclose()

    @property
    def lines(self) -> list[str]:
        return [line for b in self.items if isinstance(b, LineBatch) for line in b.lines]

    @property
    def numbered(self) -> list[tuple[int, int, str]]:
        """(line number, byte offset, text) of every line."""
        out = []
        for b in self.items:
            if isinstance(b, LineBatch):
                out += [
                    (b.first_line_no + i, off, line) for i, (line, off) in enumerate(zip(b.lines, b.offsets))
                ]
        return out

    @property
    def events(self) -> list[SourceEvent]:
        return [b for b in self.items if isinstance(b, SourceEvent)]

    @property
    def kinds(self) -> list[EventKind]:
        return [e.kind for e in self.events]

    def stream(self) -> list[str]:
        """Lines and events in order, events as ``<kind>``."""
        out: list[str] = []
        for b in self.items:
            if isinstance(b, LineBatch):
                out += b.lines
            else:
                out.append(f"<{b.kind.value}>")
        return out

    @property
    def done(self) -> bool:
        return self.task is not None and self.task.done()

    async def wait_for(self, cond, what: str = "") -> None:
        """:func:`_wait.wait_until_async` on ``cond(self)``; the source's own error, if it fails."""

        def holds() -> bool:
            if self.error is not None:
                raise self.error
            return bool(cond(self))

        await wait_until_async(holds, what=what or str(cond), show=lambda: self.stream()[-30:], step=0.005)

    async def wait_lines(self, n: int) -> None:
        await self.wait_for(lambda c: len(c.lines) >= n, f"{n} lines")

    async def wait_event(self, kind: EventKind, count: int = 1) -> None:
        await self.wait_for(lambda c: c.kinds.count(kind) >= count, f"{count} x {kind.value}")


async def events_read(directory) -> None:
    """Every inotify event queued before this call has been read and handed to its subscribers: a
    file of this call's own in ``directory``, written after them, has come through the same
    descriptor (its events are read in order)."""
    mark = os.path.join(directory, f".mark-{uuid.uuid4().hex}")
    w = Waker(interested=lambda path: path == mark, min_gap=0.0)
    assert w.subscribe(str(directory))
    try:
        with open(mark, "w") as f:
            f.write("x")
        got: set[str] = set()
        while mark not in got:
            got |= await w.wait(DEADLINE)
    finally:
        w.unsubscribe_all()
        os.unlink(mark)


class Looks:
    """Watches a local follower's looks at its file(s): a look ends when the follower has yielded
    everything it found and waits again (``Follower._wait``); a source yields only when asked, so
    by then what it found has reached the consumer."""

    def __init__(self, src: Follower) -> None:
        self.src = src
        self.n = 0  # looks ended
        self.waiting = False
        wait = src._wait

        async def counted() -> set[str] | None:
            self.n += 1
            self.waiting = True
            try:
                return await wait()
            finally:
                self.waiting = False

        src._wait = counted  # type: ignore[method-assign]

    async def caught_up(self) -> None:
        """Everything written before this call has been looked at. Polling: two more looks (one
        began after the call). Inotify: every event from before has been handed to the follower
        (:func:`events_read`) and it waits with no change pending."""
        waker = self.src.waker
        if not waker.watching:
            until = self.n + 2
            await wait_until_async(lambda: self.n >= until, what="two more looks at the file")
            return
        for directory in list(waker._dirs):
            await events_read(directory)
        await wait_until_async(
            lambda: self.waiting and not waker.event.is_set() and waker._timer is None,
            what="the follower waiting with nothing pending",
        )


class FakeClock:
    """A stand-in for the ``time`` module of a source: ``monotonic()`` moves only when told."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now


def append(path, text: str, mode: str = "a") -> None:
    with open(path, mode, encoding="utf-8", newline="") as f:
        f.write(text)


@contextlib.asynccontextmanager
async def collecting(sources: Iterable) -> AsyncIterator[list[Collector]]:
    """A :class:`Collector` per source, all running inside the block, stopped after it in order."""
    cols = [Collector(s) for s in sources]
    for c in cols:
        await c.__aenter__()
    try:
        yield cols
    finally:
        for c in cols:
            await c.__aexit__(None, None, None)


def metric_records(c: Collector) -> list[dict]:
    return [
        json.loads(line)
        for b in c.items
        if isinstance(b, LineBatch)
        for line in b.lines
        if "marker" not in json.loads(line)
    ]
