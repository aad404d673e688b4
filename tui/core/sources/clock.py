"""Clocks for paced sources (replay): the real one, and a fake one tests move by hand."""

from __future__ import annotations

import asyncio
import calendar
import time
from typing import Protocol

from tui.core.sources.aio import wait_for


def naive_now(t: float | None = None) -> float:
    """Wall-clock seconds as records carry them: the local time read as if it were UTC (``t``:
    Unix seconds; default now)."""
    t = time.time() if t is None else t
    return calendar.timegm(time.localtime(t)) + (t % 1.0)


class Clock(Protocol):
    def now(self) -> float:
        """Monotonic seconds."""

    async def wait(self, event: asyncio.Event, timeout: float | None) -> bool:
        """Wait until ``event`` is set (True) or ``timeout`` seconds pass (False)."""


class RealClock:
    def now(self) -> float:
        return asyncio.get_running_loop().time()

    async def wait(self, event: asyncio.Event, timeout: float | None) -> bool:
        if event.is_set():
            return True
        if timeout is not None and timeout <= 0:
            return False
        try:
            await wait_for(event.wait(), timeout)
            return True
        except TimeoutError:
            return False


class FakeClock:
    """Time moves only by :meth:`advance`; sleepers whose deadline is reached wake up then."""

    def __init__(self, start: float = 0.0) -> None:
        self.time = start
        self._sleepers: list[tuple[float, asyncio.Future]] = []

    def now(self) -> float:
        return self.time

    @property
    def sleepers(self) -> int:
        """How many waits with a timeout are pending."""
        return sum(1 for _, f in self._sleepers if not f.done())

    @property
    def next_deadline(self) -> float | None:
        pending = [d for d, f in self._sleepers if not f.done()]
        return min(pending) if pending else None

    def advance(self, seconds: float) -> None:
        self.time += seconds
        for deadline, fut in self._sleepers:
            if deadline <= self.time + 1e-12 and not fut.done():
                fut.set_result(None)

    async def wait(self, event: asyncio.Event, timeout: float | None) -> bool:
        if event.is_set():
            return True
        if timeout is not None and timeout <= 0:
            return False
        loop = asyncio.get_running_loop()
        waiter = asyncio.ensure_future(event.wait())
        entry = None
        waits: set[asyncio.Future] = {waiter}
        if timeout is not None:
            entry = (self.time + timeout, loop.create_future())
            self._sleepers.append(entry)
            waits.add(entry[1])
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            return event.is_set()
        finally:
            waiter.cancel()
            if entry is not None:
                self._sleepers.remove(entry)
