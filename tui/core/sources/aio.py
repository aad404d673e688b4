"""asyncio helpers.

``asyncio.wait_for`` on Python 3.11 can lose a cancellation when the awaited thing completes
at the same moment (fixed in 3.12, where it is built on ``asyncio.timeout``): a follower
waiting for file changes while lines keep arriving could then ignore Ctrl-C and keep its
caller waiting forever. This module's :func:`wait_for` is the 3.12 behaviour.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def wait_for(aw: Awaitable[T], timeout: float | None) -> T:
    """Like ``asyncio.wait_for`` (raises ``TimeoutError``), never swallowing a cancellation."""
    if timeout is None:
        return await aw
    async with asyncio.timeout(timeout):
        return await aw
