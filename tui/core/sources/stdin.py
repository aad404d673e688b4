"""Streams that are read once, as they come: stdin (``-``) and named pipes / character devices
given as a path (``<(kubectl logs -f pod)``, ``/dev/stdin``).

Pipes, terminals and sockets are read through the event loop (never a blocked thread, so Ctrl-C
and closing are immediate); a regular file redirected to stdin is read in chunks directly. The
stream ends at EOF with an ``eof`` event; the partial last line is given up then.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import selectors
import stat
from collections.abc import AsyncIterator

from tui.core.sources.aio import wait_for
from tui.core.sources.base import Batch, EventKind, GeneratorSource, SourceEvent
from tui.core.sources.lines import LineSplitter, make_batch

READ_CHUNK = 1 << 16
FILE_CHUNK = 1 << 20


class PipeSource(GeneratorSource):
    """Reads the file descriptor ``fd`` (not closed here; O_NONBLOCK is restored on close)."""

    def __init__(
        self,
        fd: int,
        name: str = "stdin",
        *,
        where: str = "stdin",
        idle_after: float | None = 30.0,
        close_fd: bool = False,
    ) -> None:
        self.fd = fd
        self.name = name
        self.where = where
        self.idle_after = idle_after
        self.close_fd = close_fd
        self.error: str | None = None
        self._gen: AsyncIterator[Batch] | None = None
        self._transport: asyncio.BaseTransport | None = None
        self._flags: int | None = None

    async def _after_close(self) -> None:
        self._cleanup()

    def _event(self, kind: EventKind, message: str = "", **data) -> SourceEvent:
        return SourceEvent(self.name, kind, message, None, data=data)

    def _cleanup(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        if self._flags is not None:
            try:
                fcntl.fcntl(self.fd, fcntl.F_SETFL, self._flags)
            except OSError:
                pass
            self._flags = None
        if self.close_fd and self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1

    async def _chunks(self) -> AsyncIterator[bytes | None]:
        """Chunks of input; None when nothing arrived for ``idle_after`` seconds."""
        try:
            st = os.fstat(self.fd)
        except OSError as exc:
            raise _Fatal(f"cannot read {self.where}: {exc.strerror or exc}") from exc
        if stat.S_ISREG(st.st_mode):
            while True:
                data = os.read(self.fd, FILE_CHUNK)
                if not data:
                    return
                yield data
                await asyncio.sleep(0)
        if stat.S_ISDIR(st.st_mode):
            raise _Fatal(f"{self.where} is a directory")
        if not _pollable(self.fd):  # /dev/null and other devices epoll refuses: plain reads
            while True:
                data = await asyncio.to_thread(os.read, self.fd, READ_CHUNK)
                if not data:
                    return
                yield data
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=READ_CHUNK * 4, loop=loop)
        self._flags = fcntl.fcntl(self.fd, fcntl.F_GETFL)
        pipe = os.fdopen(os.dup(self.fd), "rb", buffering=0)
        try:
            self._transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe
            )
        except (OSError, ValueError) as exc:
            pipe.close()
            raise _Fatal(f"cannot read {self.where}: {exc}") from exc
        while True:
            if self.idle_after:
                try:
                    data = await wait_for(reader.read(READ_CHUNK), self.idle_after)
                except TimeoutError:
                    yield None
                    continue
            else:
                data = await reader.read(READ_CHUNK)
            if not data:
                return
            yield data

    async def _run(self) -> AsyncIterator[Batch]:
        splitter = LineSplitter()
        idle_said = False
        try:
            yield self._event(EventKind.OPENED, f"reading {self.where}")
            try:
                async for data in self._chunks():
                    if data is None:
                        if not idle_said:
                            idle_said = True
                            yield self._event(
                                EventKind.IDLE,
                                f"no new line for {self.idle_after:g} s",
                                seconds=self.idle_after,
                            )
                        continue
                    idle_said = False
                    b = make_batch(self.name, splitter.feed(data))
                    if b is not None:
                        yield b
            except _Fatal as exc:
                self.error = str(exc)
                yield self._event(EventKind.ERROR, self.error, fatal=True)
                return
            except OSError as exc:
                self.error = f"cannot read {self.where}: {exc.strerror or exc}"
                yield self._event(EventKind.ERROR, self.error, fatal=True)
                return
            b = make_batch(self.name, splitter.flush())
            if b is not None:
                yield b
            yield self._event(EventKind.EOF, f"end of {self.where}", offset=splitter.pos)
        finally:
            self._cleanup()


class _Fatal(Exception):
    pass


def _pollable(fd: int) -> bool:
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
        return True
    except (OSError, ValueError):
        return False


def stdin_source(name: str = "stdin", **options) -> PipeSource:
    return PipeSource(0, name, where="stdin", **options)


def open_pipe(path: str, name: str | None = None, **options) -> PipeSource:
    """A FIFO or character device named by ``path`` (opened without blocking on a writer)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    return PipeSource(fd, name or path, where=path, close_fd=True, **options)
