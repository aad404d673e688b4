"""The one way a test waits: poll a condition until it holds, with a generous deadline.

A test never sleeps a fixed time to wait for something, and never asserts on how long something
took: it waits for the thing itself. The deadline is only there so that a broken test fails
instead of hanging; it is long (a busy, shared machine may be many times slower than a laptop)
and reaching it is an ``AssertionError`` that says what was awaited and, when ``show`` is given,
the state at the end.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")

DEADLINE = 60.0
"""Seconds before a wait gives up (a failure, never a pass)."""

STEP = 0.02
"""Seconds between two looks at the condition."""


def _fail(what: str, deadline: float, show: Callable[[], Any] | None) -> AssertionError:
    msg = f"timed out after {deadline:g} s waiting for {what or 'a condition'}"
    if show is not None:
        msg += f"; at the end: {show()}"
    return AssertionError(msg)


class _Looks(Generic[T]):
    """Iterating looks at ``cond`` until it holds (then ``got`` is its value): each item is a
    pause the caller makes before the next look; the failure is raised after ``deadline``."""

    def __init__(self, cond: Callable[[], T], deadline: float, what: str, show: Callable[[], Any] | None):
        self.cond, self.deadline, self.what, self.show = cond, deadline, what, show
        self.got: T

    def __iter__(self) -> Iterator[None]:
        end = time.monotonic() + self.deadline
        while not (got := self.cond()):
            if time.monotonic() > end:
                raise _fail(self.what, self.deadline, self.show)
            yield
        self.got = got


def wait_until(
    cond: Callable[[], T],
    deadline: float = DEADLINE,
    what: str = "",
    *,
    show: Callable[[], Any] | None = None,
    step: float = STEP,
) -> T:
    """Call ``cond`` every ``step`` seconds until it returns something true, and return that; an
    ``AssertionError`` naming ``what`` (and ``show()``) after ``deadline`` seconds."""
    looks = _Looks(cond, deadline, what, show)
    for _ in looks:
        time.sleep(step)
    return looks.got


async def wait_until_async(
    cond: Callable[[], T],
    deadline: float = DEADLINE,
    what: str = "",
    *,
    show: Callable[[], Any] | None = None,
    step: float = STEP,
    pause: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> T:
    """:func:`wait_until` in a coroutine: the event loop runs between two looks (``pause``, e.g. a
    Textual pilot's ``pause``, lets the app process its messages too)."""
    looks = _Looks(cond, deadline, what, show)
    for _ in looks:
        await pause(step)
    return looks.got


async def wait_until_awaited(
    cond: Callable[[], Awaitable[T]],
    deadline: float = DEADLINE,
    what: str = "",
    *,
    show: Callable[[], Any] | None = None,
    step: float = STEP,
) -> T:
    """:func:`wait_until_async` for a condition that is itself a coroutine (a query to a server
    that answers in its own time): awaited every ``step`` seconds until its result is true."""
    end = time.monotonic() + deadline
    while not (got := await cond()):
        if time.monotonic() > end:
            raise _fail(what, deadline, show)
        await asyncio.sleep(step)
    return got
