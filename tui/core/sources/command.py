"""``cmd:COMMAND``: run a command (``kubectl logs -f``, ``docker logs -f``, ``journalctl -f``) and
read its standard output as the log.

* The command runs through ``/bin/sh -c`` (pipes and redirections work: ``docker`` writes a
  container's stderr to its own stderr, so ``cmd:docker logs -f NAME 2>&1`` reads both), in its
  own process group, with stdin from /dev/null.
* Lines the command writes on stderr become ``stderr`` events (one per chunk read, the lines in
  ``data["lines"]``), interleaved with the stdout batches in arrival order.
* Its end is an ``exited`` event (``data["returncode"]``); a non-zero status is also recorded
  in ``error``. Closing the source stops the whole process group (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator

from tui.core.sources.aio import wait_for
from tui.core.sources.base import Batch, EventKind, GeneratorSource, SourceEvent
from tui.core.sources.lines import LineSplitter, make_batch

READ_CHUNK = 1 << 16
_QUEUE = 32  # chunks in flight between the pipe readers and the consumer (bounded memory)
TERM_GRACE = 2.0


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}"
    if code == 127:
        return "exited with status 127 (command not found)"
    if code == 126:
        return "exited with status 126 (not executable)"
    return f"exited with status {code}"


class CommandSource(GeneratorSource):
    def __init__(self, command: str, name: str | None = None, *, idle_after: float | None = 30.0) -> None:
        self.command = command
        self.name = name or f"cmd:{command}"
        self.where = f"command: {command}"
        self.idle_after = idle_after
        self.error: str | None = None
        self.returncode: int | None = None
        self.proc: asyncio.subprocess.Process | None = None
        self._gen: AsyncIterator[Batch] | None = None
        self._tasks: list[asyncio.Task] = []

    async def _after_close(self) -> None:
        await self._stop()

    def _event(self, kind: EventKind, message: str = "", **data) -> SourceEvent:
        return SourceEvent(self.name, kind, message, None, data=data)

    async def _pump(self, stream: asyncio.StreamReader, tag: str, queue: asyncio.Queue) -> None:
        try:
            while True:
                data = await stream.read(READ_CHUNK)
                if not data:
                    break
                await queue.put((tag, data))
        except (OSError, ValueError):
            pass
        await queue.put((tag, b""))

    async def _run(self) -> AsyncIterator[Batch]:
        try:
            try:
                self.proc = await asyncio.create_subprocess_shell(
                    self.command,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,
                )
            except OSError as exc:
                self.error = f"cannot run {self.command!r}: {exc.strerror or exc}"
                yield self._event(EventKind.ERROR, self.error, fatal=True)
                return
            proc = self.proc
            yield self._event(EventKind.OPENED, f"started {self.command} (pid {proc.pid})", pid=proc.pid)
            queue: asyncio.Queue = asyncio.Queue(_QUEUE)
            assert proc.stdout is not None and proc.stderr is not None
            self._tasks = [
                asyncio.create_task(self._pump(proc.stdout, "out", queue)),
                asyncio.create_task(self._pump(proc.stderr, "err", queue)),
            ]
            out, err = LineSplitter(), LineSplitter()
            open_streams = 2
            idle_said = False
            while open_streams:
                try:
                    if self.idle_after and not idle_said:
                        tag, data = await wait_for(queue.get(), self.idle_after)
                    else:
                        tag, data = await queue.get()
                except TimeoutError:
                    idle_said = True
                    yield self._event(
                        EventKind.IDLE, f"no new line for {self.idle_after:g} s", seconds=self.idle_after
                    )
                    continue
                splitter = out if tag == "out" else err
                if data:
                    split = splitter.feed(data)
                else:
                    open_streams -= 1
                    split = splitter.flush()
                if tag == "out":
                    idle_said = False
                    b = make_batch(self.name, split)
                    if b is not None:
                        yield b
                elif split[0]:
                    yield self._event(EventKind.STDERR, "\n".join(split[0]), lines=split[0])
            code = await proc.wait()
            self.returncode = code
            text = f"{self.command} {describe_exit(code)}"
            if code != 0:
                self.error = text
            yield self._event(EventKind.EXITED, text, returncode=code)
        finally:
            await self._stop()

    async def _stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        self._tasks = []
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        for sig, wait in ((signal.SIGTERM, TERM_GRACE), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                await wait_for(asyncio.shield(proc.wait()), wait)
                return
            except TimeoutError:
                continue
            except asyncio.CancelledError:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                raise
