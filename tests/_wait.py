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
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

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
    end = time.monotonic() + deadline
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > end:
            raise _fail(what, deadline, show)
        time.sleep(step)


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
    end = time.monotonic() + deadline
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > end:
            raise _fail(what, deadline, show)
        await pause(step)
