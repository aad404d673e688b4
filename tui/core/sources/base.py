"""The one interface every source implements.

A source is an async iterator of *batches*, each either a :class:`LineBatch` (many lines at once:
a busy log or a replay never costs one await per line) or a :class:`SourceEvent` (opened,
truncated, rotated, ...). Items come in stream order: an event sits between the lines that came
before it and the lines that come after it.

Consumers (``specwatch stream``, the TUI, the summary) feed the lines to a
:class:`tui.core.formats.LineParser` and the events to the statistics. Only ``restarted`` (the user
says "I restarted the server") opens a new segment; ``truncated``, ``rotated`` and ``switched``
change the file, not the server: they are recorded (chart, log tail, JSONL) and the segment and
its config carry on unless the new content itself shows a restart (a startup marker).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol, runtime_checkable

# A longer line is not read: it is reported as oversized, with its byte length (see lines.py).
MAX_LINE_BYTES = 1 << 20


class EventKind(str, Enum):
    OPENED = "opened"  # a file/stream was opened (data: path, inode, size, start offset)
    TRUNCATED = "truncated"  # the file shrank; reading again from its new start (a file change)
    ROTATED = "rotated"  # the name now points at another file; old one finished (a file change)
    SWITCHED = "switched"  # a glob gained a newer match; old file finished (a file change)
    # the file does not exist (yet / any more), or (data: reason "slow_start") the host has not
    # started its reader yet; waiting for it
    WAITING = "waiting"
    IDLE = "idle"  # no new line for a while (data: seconds)
    EOF = "eof"  # end of input reached and not following
    ERROR = "error"  # a problem worth a one-line message (data: fatal: bool)
    RECONNECTING = "reconnecting"  # (ssh) link lost, trying again (data: attempt, delay)
    CONNECTED = "connected"  # (ssh) connected / reconnected
    EXITED = "exited"  # (command) the process ended (data: returncode)
    STDERR = "stderr"  # (command/ssh) a line the process wrote on stderr
    RESTARTED = "restarted"  # manual "I restarted the server now" boundary (new segment)
    # (replay) the playhead jumps. data: reset (bool: drop all state of this source, the lines
    # from the start of the file follow), target, line_no/offset when known. Lines skipped by a
    # forward jump are still emitted (in fast batches), so statistics stay those of the file up
    # to the playhead.
    SEEK = "seek"


# Events after which the following lines belong to a new segment (the server restarted).
SEGMENT_EVENTS = frozenset({EventKind.RESTARTED})
# Events after which the lines come from another file (or the same file from its start): the
# parser's cross-line state is dropped, the segment carries on.
FILE_EVENTS = frozenset({EventKind.TRUNCATED, EventKind.ROTATED, EventKind.SWITCHED})


@dataclass(slots=True)
class LineBatch:
    """Consecutive complete lines of one source (newline and CR stripped, decoded with
    ``errors="replace"``).

    ``offsets[i]`` is the byte offset of ``lines[i]`` in the file it came from (``path``);
    ``first_line_no`` is the 1-based line number of ``lines[0]`` in that file (or stream).

    ``kind`` is ``"log"`` for log text. Sources that are not logs (a Prometheus ``/metrics``
    scrape) send ``"metrics"`` batches whose lines are JSON objects of
    :class:`tui.core.model.records.RecordModel` fields: the line parser turns them into records marked
    ``kind="metrics"``, so every consumer that feeds batches to a parser handles them unchanged.

    ``data`` (optional): the same lines as the bytes read, each ending in a newline, from a reader
    that has them in one buffer (a replay at full speed): a consumer may scan the buffer whole
    (:mod:`tui.core.formats.fastscan`) instead of parsing ``lines`` one by one. None otherwise.
    """

    source: str
    lines: list[str]
    offsets: list[int]
    first_line_no: int
    path: str | None = None
    kind: str = "log"
    data: bytes | None = None

    def __len__(self) -> int:
        return len(self.lines)


@dataclass(slots=True)
class SourceEvent:
    source: str
    kind: EventKind
    message: str = ""
    path: str | None = None
    time: float = field(default_factory=time.time)
    data: dict = field(default_factory=dict)

    @property
    def opens_segment(self) -> bool:
        return self.kind in SEGMENT_EVENTS

    @property
    def changes_file(self) -> bool:
        return self.kind in FILE_EVENTS


Batch = LineBatch | SourceEvent


@runtime_checkable
class Source(Protocol):
    """What every source offers. ``name`` is the label shown to the user."""

    name: str

    def __aiter__(self) -> AsyncIterator[Batch]: ...

    async def aclose(self) -> None: ...


class GeneratorSource:
    """A source whose batches come from one async generator, ``_run()``: iterating starts it
    (once); :meth:`aclose` closes it, then runs the source's own ``_after_close`` clean-up."""

    _gen: AsyncIterator[Batch] | None = None

    def __aiter__(self) -> AsyncIterator[Batch]:
        if self._gen is None:
            self._gen = self._run()
        return self._gen

    def _run(self) -> AsyncIterator[Batch]:
        raise NotImplementedError

    async def aclose(self) -> None:
        gen, self._gen = self._gen, None
        if gen is not None:
            try:
                await gen.aclose()  # type: ignore[attr-defined]
            except RuntimeError:  # being iterated by a task that is being cancelled
                pass
        await self._after_close()

    async def _after_close(self) -> None:
        """Release what the source holds (files, processes, connections)."""
