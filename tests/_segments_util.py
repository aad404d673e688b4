"""sglang lines for the segment tests: a startup (``server_args``), a decode line with a given
stamp, and a stamp as a server prints it; a batch of lines and an event of one source."""

from __future__ import annotations

import time

from tui.core.sources.base import EventKind, LineBatch, SourceEvent

ARGS = (
    "[2026-01-02 03:00:00] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', "
    "speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4)"
)


def dec(n: int, stamp: str = "2026-01-02 03:04:05") -> str:
    return (
        f"[{stamp} TP0] Decode batch, #running-req: 4, #token: {n}, token usage: 0.01, "
        f"accept len: 2.50, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 99.00, "
        f"#queue-req: 0"
    )


def stamp(wall: float) -> str:
    """As a server prints it: local time, no zone."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(wall))


def batch(lines: list[str], first: int = 1, offset: int = 0) -> LineBatch:
    offs, pos = [], offset
    for line in lines:
        offs.append(pos)
        pos += len(line) + 1
    return LineBatch("x", lines, offs, first, "/logs/a.log")


def ev(kind: EventKind, path: str | None = "/logs/a.log", **data) -> SourceEvent:
    return SourceEvent("x", kind, f"{kind.value} happened", path, data=data)
