"""Several sources at once: run them concurrently and interleave their batches by arrival.

Each source is pumped by its own task into one bounded queue (a slow consumer holds the
sources back instead of growing memory). A source that raises is reported as a fatal ``error``
event rather than taking the others down. Closing the iterator stops every source.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence

from tui.core.sources.base import Batch, EventKind, Source, SourceEvent


async def merged(
    sources: Sequence[Source], *, queue_size: int = 8
) -> AsyncGenerator[tuple[int, Batch | None], None]:
    """Yields ``(index, batch)`` in arrival order, and ``(index, None)`` when source ``index``
    has ended; returns when all have ended."""
    queue: asyncio.Queue[tuple[int, Batch | None]] = asyncio.Queue(queue_size)

    async def pump(i: int, src: Source) -> None:
        try:
            async for b in src:
                await queue.put((i, b))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a source must not take the others down
            ev = SourceEvent(
                getattr(src, "name", str(i)),
                EventKind.ERROR,
                f"internal error: {type(exc).__name__}: {exc}",
                data={"fatal": True},
            )
            if getattr(src, "error", None) is None:
                try:
                    src.error = ev.message  # type: ignore[attr-defined]
                except AttributeError:
                    pass
            await queue.put((i, ev))
        await queue.put((i, None))

    tasks = [
        asyncio.create_task(pump(i, s), name=f"source:{getattr(s, 'name', i)}") for i, s in enumerate(sources)
    ]
    try:
        remaining = len(tasks)
        while remaining:
            i, b = await queue.get()
            if b is None:
                remaining -= 1
            yield i, b
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for s in sources:
            try:
                await s.aclose()
            except Exception:
                pass
