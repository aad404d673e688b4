"""The long-lived channels of an SSH source on one connection (the reader, and a glob's lister):
started with their output pumped into the session's queue, stopped together, and a lost
connection told apart from a refused channel."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncssh

from tui.core.sources.ssh.shared import ChannelRefused

READ_CHUNK = 1 << 16


class Lost(Exception):
    """The connection under the source failed (the source reconnects)."""


def raise_if_lost(conn, exc: BaseException | None) -> None:
    """Raises :class:`Lost` when ``conn`` is closed or ``exc`` is a connection failure."""
    if conn.is_closed() or isinstance(
        exc, (asyncssh.ConnectionLost, asyncssh.DisconnectError, BrokenPipeError, ConnectionError)
    ):
        raise Lost(getattr(exc, "reason", None) or str(exc or "") or "connection closed")


def refused(host: str, exc: asyncssh.ChannelOpenError) -> ChannelRefused:
    """The error for a channel the host would not open (the connection itself is up)."""
    return ChannelRefused(
        f"{host} refused a new session ({exc.reason or exc}); sshd allows "
        "MaxSessions (10 by default) per connection"
    )


class Channels:
    """The running channels by role; each one's output goes to a queue as ``(role, proc, data)``
    items, and its end as ``(role + "_eof", proc, (exception or None, stderr chunks))``."""

    def __init__(self, host: str) -> None:
        self.host = host
        self._procs: dict[str, Any] = {}
        self._tasks: set[asyncio.Task] = set()

    async def start(self, conn, role: str, command: str, q: asyncio.Queue) -> Any:
        """Runs ``command`` as the channel ``role`` (closing the one it replaces) and returns its
        process; raises :class:`ChannelRefused` or :class:`Lost`."""
        old = self._procs.pop(role, None)
        if old is not None:
            old.close()
        try:
            proc = await conn.create_process(command, encoding=None, stdin=asyncssh.DEVNULL)
        except asyncssh.ChannelOpenError as exc:
            if conn.is_closed():
                raise Lost(exc.reason or str(exc)) from None
            raise refused(self.host, exc) from None
        except (asyncssh.Error, OSError) as exc:
            raise_if_lost(conn, exc)
            raise Lost(str(exc)) from None
        self._procs[role] = proc
        stderr: list[bytes] = []

        async def pump_err() -> None:
            try:
                while len(b"".join(stderr)) < 4096:
                    data = await proc.stderr.read(4096)
                    if not data:
                        return
                    stderr.append(data)
            except Exception:
                return

        async def pump() -> None:
            exc: BaseException | None = None
            try:
                while True:
                    data = await proc.stdout.read(READ_CHUNK)
                    if not data:
                        break
                    await q.put((role, proc, data))
            except (asyncssh.Error, OSError) as e:
                exc = e
            await asyncio.sleep(0)
            await q.put((role + "_eof", proc, (exc, stderr)))

        for coro in (pump(), pump_err()):
            task = asyncio.ensure_future(coro)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return proc

    def stop(self) -> None:
        """Closes every channel and stops its pumps."""
        for task in self._tasks:
            task.cancel()
        self._tasks.clear()
        for proc in self._procs.values():
            try:
                proc.close()
            except Exception:
                pass
        self._procs.clear()
