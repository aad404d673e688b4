"""The reading half of the watch screen: one async worker per pane feeds what its source yields
into the pane's model (:class:`~tui.panes.state.PaneState`) and never draws; the tick
(:mod:`tui.screens.ticking`) draws from the model. A live write or two is held and fed at the tick
as one; longer batches are fed in slices of SLICE lines, and a buffer (``replay --max``) is
scanned whole in pieces of BULK bytes, with a short rest after BURST seconds of work so that
keys and renders get through."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace

from textual.message import Message

from tui.core.sources.base import LineBatch
from tui.panes.launch import PaneSpec
from tui.panes.state import PaneState
from tui.screens.messages import SourceFinished, SourceFirstLines, SourceStatusChanged

SLICE = 100  # lines parsed between two yields to the event loop (keys stay responsive)
BULK = 512 << 10  # bytes of a buffer scanned between two yields (a replay at max speed)
BURST = 0.020  # seconds of parsing after which a source rests briefly, so the UI's messages flow


async def feed(spec: PaneSpec, state: PaneState, i: int, post: Callable[[Message], object]) -> None:
    """Open pane ``i``'s source (``spec``) and feed what it yields into ``state`` until it ends;
    ``post`` gets :class:`SourceStatusChanged` for each event and :class:`SourceFinished` at the
    end. An error opening or reading the source ends it with the error in its pane."""
    try:
        src = spec.open()
    except Exception as exc:  # a source that cannot even be opened: say so in its pane
        state.on_finished(str(exc) or type(exc).__name__)
        post(SourceFinished(i, state.error))
        return
    state.source = src
    burst = time.perf_counter()

    async def rest() -> None:
        nonlocal burst
        if time.perf_counter() - burst > BURST:
            await asyncio.sleep(0.001)  # a real pause: key presses and renders get through
            burst = time.perf_counter()
        else:
            await asyncio.sleep(0)

    first = True
    try:
        async for batch in src:
            if isinstance(batch, LineBatch):
                if first and batch.lines:
                    first = False
                    post(SourceFirstLines(i))  # drawn whole at once, held lines and all
                for part in pieces(batch):
                    if state.feed_buffer(part):  # a buffer scanned whole (a replay at max speed)
                        await rest()
                    elif len(part.lines) <= SLICE:  # a live write or two: fed at the tick, as one
                        state.hold(part)
                        if state.held_lines >= SLICE:
                            state.flush()
                    else:
                        for k in range(0, len(part.lines), SLICE):
                            state.feed_lines(
                                replace(
                                    part,
                                    lines=part.lines[k : k + SLICE],
                                    offsets=part.offsets[k : k + SLICE],
                                    first_line_no=part.first_line_no + k,
                                    data=None,
                                )
                            )
                            await rest()
            else:
                state.on_event(batch)
                post(SourceStatusChanged(i, state.status, batch.message))
            await rest()
        state.on_finished(getattr(src, "error", None))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a bug in a source must not take the app down
        state.on_finished(f"{type(exc).__name__}: {exc}")
    finally:
        try:
            await src.aclose()
        except Exception:
            pass
    post(SourceFinished(i, state.error))


def pieces(batch: LineBatch) -> list[LineBatch]:
    """A batch with its buffer (a replay at max speed) in pieces of ``BULK`` bytes."""
    if batch.data is None:
        return [batch]
    from tui.panes import whole_buffer  # the summary machinery: loaded when the first buffer comes

    return whole_buffer.pieces(batch, BULK)
