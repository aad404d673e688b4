"""SSH sources: ``host:/path``, ``user@host:/path``, ``ssh://user@host:port/path`` and remote globs
(``gpu1:'/data/logs/*.log'``), followed like local files, over one shared connection per host.

The events are those of the local followers (opened, truncated, rotated, switched, waiting,
idle, eof, error), plus ``connected`` / ``reconnecting``. Resuming is exact: the source keeps
the file's identity (device:inode), the byte offset it has read to (the held partial line
included) and a fingerprint of the bytes read; after a reconnect a probe checks them and
:func:`tui.core.sources.identity.decide` says resume, ``truncated`` (read again from the start, the
rest of the old content first from a copy when there is one) or ``rotated`` (the rest of the old
file first, under its new name, when it is still in the directory). See :mod:`.remote` for what
runs on the host and :mod:`.connect` for
connections, host keys and errors.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncssh

from tui.core.sources.base import Batch, EventKind, GeneratorSource, SourceEvent
from tui.core.sources.identity import Fingerprint
from tui.core.sources.lines import START, LineSplitter, StartAt
from tui.core.sources.ssh.auth import SshError, target_text
from tui.core.sources.ssh.connect import SharedConnection, SshSettings, acquire, release
from tui.core.sources.ssh.remote_side import (
    Entry,
    RemotePathError,
    describe_tail_message,
    parse_entries,
    parse_remote_path,
)
from tui.core.sources.ssh.scripts import lister_command, new_nonce, new_tag, reader_command
from tui.core.sources.ssh.shared import ChannelRefused
from tui.core.sources.target import SourceSpec, SourceSpecError, SshTarget

READ_CHUNK = 1 << 16
_SETTINGS = {f for f in SshSettings.__dataclass_fields__}


class _Lost(Exception):
    """The connection under this source failed (the source reconnects)."""


class SshSource(GeneratorSource):
    """A remote file (or the newest match of a remote glob) followed by name."""

    def __init__(
        self,
        target: SshTarget,
        name: str | None = None,
        *,
        follow: bool = True,
        start: StartAt = START,
        idle_after: float | None = 30.0,
        settings: SshSettings | None = None,
    ) -> None:
        try:
            self.rp = parse_remote_path(target.path)
        except RemotePathError as exc:
            raise SourceSpecError(f"{target.host}:{target.path}: {exc}") from None
        self.target = target
        self.host = target_text(target)
        self.name = name or f"{self.host}:{target.path}"
        self.where = f"ssh {self.host}:{target.path}"
        self.follow = follow
        self.start = start
        self.idle_after = idle_after
        self.settings = settings or SshSettings()
        self.error: str | None = None
        self.shared: SharedConnection | None = None
        self.splitter = LineSplitter()
        self.fingerprint = Fingerprint()  # the bytes read that identify the file (see .identity)
        self.identity: str | None = None  # device:inode of the file being read
        self.current: str | None = None  # its name in the directory
        self.cur_mtime = 0.0
        self.known: set[str] | None = None  # glob: identities present when the current was chosen
        self._gen: AsyncIterator[Batch] | None = None
        self._tag, self._nonce = new_tag(), new_nonce()
        self._opened_once = False
        self._procs: dict[str, Any] = {}
        self._tasks: set[asyncio.Task] = set()
        self._draft_cache: dict[tuple[str, str | None], dict] = {}

    # -- the source interface ----------------------------------------------------------------
    async def _after_close(self) -> None:
        await self._cleanup()

    def path_of(self, name: str | None) -> str | None:
        return None if name is None else f"{self.target.host}:{self.rp.join(name)}"

    def _event(self, kind: EventKind, message: str = "", name: str | None = None, **data) -> SourceEvent:
        return SourceEvent(
            self.name, kind, message, self.path_of(name if name is not None else self.current), data=data
        )

    async def _cleanup(self) -> None:
        self._stop_channels()
        if self.shared is not None:
            shared, self.shared = self.shared, None
            await release(shared, self.channels)

    @property
    def channels(self) -> int:
        """Long-lived channels this source keeps open: the reader, and a glob's lister."""
        return 2 if self.rp.glob else 1

    def _stop_channels(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._tasks.clear()
        for proc in self._procs.values():
            try:
                proc.close()
            except Exception:
                pass
        self._procs.clear()

    # -- connection loop ---------------------------------------------------------------------
    async def _run(self) -> AsyncIterator[Batch]:
        self.shared = acquire(self.target, self.settings, self.channels)
        said_error: str | None = None
        last_conn = None
        try:
            while True:
                try:
                    conn = await self.shared.get()
                except SshError as exc:
                    first = self.shared.connects == 0 and not self._opened_once
                    if exc.fatal or (first and (exc.first_fatal or not self.follow)):
                        self.error = exc.message
                        yield self._event(EventKind.ERROR, exc.message, fatal=True, reason=exc.kind)
                        return
                    if exc.message != said_error:
                        said_error = exc.message
                        yield self._event(
                            EventKind.ERROR, exc.message + " (retrying)", fatal=False, reason=exc.kind
                        )
                    yield self._event(
                        EventKind.RECONNECTING,
                        f"reconnecting to {self.host} in {exc.delay:.1f} s (attempt {exc.attempt + 1})",
                        attempt=exc.attempt + 1,
                        delay=round(exc.delay, 3),
                    )
                    continue
                said_error = None
                if conn is not last_conn:
                    again = last_conn is not None or self._opened_once
                    last_conn = conn
                    sh = self.shared
                    yield self._event(
                        EventKind.CONNECTED,
                        f"{'reconnected' if again else 'connected'} to {self.host} "
                        f"({sh.where}, {sh.server_version or 'ssh'}){sh.host_key_note}",
                        host=self.target.host,
                        where=sh.where,
                        reconnect=again,
                        server_version=sh.server_version,
                    )
                try:
                    async for b in self._session(conn):
                        yield b
                    return
                except _Lost as lost:
                    self._stop_channels()
                    self.shared.mark_lost(conn)
                    yield self._event(
                        EventKind.RECONNECTING,
                        f"connection to {self.host} lost ({lost}); "
                        f"reconnecting, will resume at byte {self.splitter.pos}",
                        attempt=1,
                        delay=round(max(0.0, self.shared.next_at - asyncio.get_running_loop().time()), 3),
                    )
        finally:
            await self._cleanup()

    def _lost_or(self, conn, exc: BaseException | None) -> None:
        if conn.is_closed() or isinstance(
            exc, (asyncssh.ConnectionLost, asyncssh.DisconnectError, BrokenPipeError, ConnectionError)
        ):
            raise _Lost(getattr(exc, "reason", None) or str(exc or "") or "connection closed")

    # -- channels ----------------------------------------------------------------------------
    async def _start(self, conn, role: str, command: str, q: asyncio.Queue) -> None:
        old = self._procs.pop(role, None)
        if old is not None:
            old.close()
        try:
            proc = await conn.create_process(command, encoding=None, stdin=asyncssh.DEVNULL)
        except asyncssh.ChannelOpenError as exc:
            if conn.is_closed():
                raise _Lost(exc.reason or str(exc)) from None
            raise ChannelRefused(
                f"{self.host} refused a new session ({exc.reason or exc}); sshd allows "
                "MaxSessions (10 by default) per connection"
            ) from None
        except (asyncssh.Error, OSError) as exc:
            self._lost_or(conn, exc)
            raise _Lost(str(exc)) from None
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

    def _reader_cmd(self, name: str, mode: str) -> str:
        s = self.start if not self._opened_once else START
        if mode == "first":
            mode = {"start": "start", "end": "end", "last": "last"}[s.mode]
        return self.reader_for(name, mode, lines=s.lines)

    def reader_for(
        self,
        name: str,
        mode: str,
        *,
        offset: int | None = None,
        expect: str | None = None,
        follow: bool | None = None,
        lines: int = 0,
        sums: str = "",
        ranges: list[tuple[int, int]] | None = None,
    ) -> str:
        """The reader's command for ``name`` with this source's tag, nonce, path and status
        interval; by default at the offset read to, expecting the file read, following as the
        source does."""
        return reader_command(
            self._tag,
            self._nonce,
            self.rp,
            name,
            expect=expect or self.identity or "-",
            offset=self.splitter.pos if offset is None else offset,
            mode=mode,
            lines=lines,
            interval=self.settings.status_interval,
            follow=self.follow if follow is None else follow,
            sums=sums,
            ranges=ranges,
        )

    # -- one connection's worth of reading ---------------------------------------------------
    async def _session(self, conn) -> AsyncIterator[Batch]:
        from tui.core.sources.ssh.tail import Session

        session = Session(self, conn)
        async for b in session.run():
            yield b

    # -- draft model config.json over the same connection ------------------------------------
    async def read_draft_config(self, draft_path: str, family: str | None) -> dict:
        """Facts from ``DRAFT/config.json`` on this source's host (a note when unreadable)."""
        from tui.core.sources.ssh.whole import read_draft_facts

        key = (draft_path, family)
        if key not in self._draft_cache:
            shared = self.shared or acquire(self.target, self.settings)
            try:
                self._draft_cache[key] = await read_draft_facts(shared, draft_path, family)
            finally:
                if shared is not self.shared:
                    await release(shared)
        return dict(self._draft_cache[key])

    def draft_resolver(self):
        """A sync resolver for :func:`tui.core.formats.draft_config.attach` over what was read so far."""

        def resolve(draft_path: str, family: str | None) -> dict:
            got = self._draft_cache.get((draft_path, family))
            return dict(got) if got is not None else {"config_path": None, "note": "config.json not read yet"}

        return resolve


def settings_from_options(options: dict[str, Any]) -> SshSettings:
    s = options.get("ssh_settings")
    if isinstance(s, SshSettings):
        return s
    kw = {k: v for k, v in options.items() if k in _SETTINGS}
    if "ssh_connect_options" in options:
        kw["connect_options"] = dict(options["ssh_connect_options"])
    return SshSettings(**kw)


def open_ssh(spec: SourceSpec, *, follow: bool = True, start: StartAt = START, **options) -> SshSource:
    """Opens an ``ssh`` spec (for :class:`tui.core.sources.kinds.SshKind`)."""
    assert spec.ssh is not None
    idle = options.get("idle_after", 30.0)
    return SshSource(
        spec.ssh,
        spec.name,
        follow=follow,
        start=start,
        idle_after=idle,
        settings=settings_from_options(options),
    )


__all__ = [
    "SshSource",
    "SshSettings",
    "SshError",
    "open_ssh",
    "Entry",
    "parse_entries",
    "describe_tail_message",
    "lister_command",
]
