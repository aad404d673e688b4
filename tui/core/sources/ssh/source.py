"""SSH sources: ``host:/path``, ``user@host:/path``, ``ssh://user@host:port/path`` and remote globs
(``gpu1:'/data/logs/*.log'``), followed like local files, over one shared connection per host.

The events are those of the local followers (opened, truncated, rotated, switched, waiting,
idle, eof, error), plus ``connected`` / ``reconnecting``. Resuming is exact: the source keeps
the file's identity (device:inode), the byte offset it has read to (the held partial line
included) and a fingerprint of the bytes read (:class:`.state.FileState`); after a reconnect the
reader (or a probe) checks them (:mod:`.opening`) and
:func:`tui.core.sources.identity.decide` says resume, ``truncated`` (read again from the start, the
rest of the old content first from a copy when there is one) or ``rotated`` (the rest of the old
file first, under its new name, when it is still in the directory). See :mod:`.remote_side` and
:mod:`.scripts` for what runs on the host, :mod:`.tail` for the follow loop on one connection and
:mod:`.connect` for connections, host keys and errors.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from tui.core.sources.base import Batch, EventKind, GeneratorSource, SourceEvent
from tui.core.sources.lines import START, StartAt
from tui.core.sources.ssh.auth import SshError, target_text
from tui.core.sources.ssh.channels import Channels, Lost
from tui.core.sources.ssh.connect import SharedConnection, SshSettings, acquire, release
from tui.core.sources.ssh.remote_side import (
    Entry,
    RemotePathError,
    describe_tail_message,
    parse_entries,
    parse_remote_path,
)
from tui.core.sources.ssh.scripts import lister_command, new_nonce, new_tag, reader_command
from tui.core.sources.ssh.state import FileState
from tui.core.sources.ssh.tail import Session
from tui.core.sources.target import SourceSpec, SourceSpecError, SshTarget

_SETTINGS = {f for f in SshSettings.__dataclass_fields__}


class SshSource(GeneratorSource):
    """A remote file (or the newest match of a remote glob) followed by name. The file's state
    (:class:`.state.FileState`) and the channels (:class:`.channels.Channels`) outlive each
    connection; a :class:`.tail.Session` reads over one connection."""

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
        self.shared: SharedConnection | None = None
        self.file = FileState()
        self.tag, self.nonce = new_tag(), new_nonce()
        self._channels = Channels(self.host)
        self._draft_cache: dict[tuple[str, str | None], dict] = {}

    @property
    def error(self) -> str | None:
        """The fatal error said, if any (kept in the file's state, where the session sets it)."""
        return self.file.error

    @error.setter
    def error(self, message: str | None) -> None:
        self.file.error = message

    # -- the source interface ----------------------------------------------------------------
    async def _after_close(self) -> None:
        await self._cleanup()

    def path_of(self, name: str | None) -> str | None:
        return None if name is None else f"{self.target.host}:{self.rp.join(name)}"

    def display(self, name: str | None) -> str:
        """``name`` as said in messages: ``host:/dir/name`` (the source's name for None)."""
        return self.path_of(name) or self.name

    def event(self, kind: EventKind, message: str = "", name: str | None = None, **data) -> SourceEvent:
        """An event of this source about ``name`` (default: the file being read)."""
        return SourceEvent(
            self.name, kind, message, self.path_of(name if name is not None else self.file.current), data=data
        )

    async def _cleanup(self) -> None:
        self._channels.stop()
        if self.shared is not None:
            shared, self.shared = self.shared, None
            await release(shared, self.channels)

    @property
    def channels(self) -> int:
        """Long-lived channels this source keeps open: the reader, and a glob's lister."""
        return 2 if self.rp.glob else 1

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
                    first = self.shared.connects == 0 and not self.file.opened_once
                    if exc.fatal or (first and (exc.first_fatal or not self.follow)):
                        self.file.error = exc.message
                        yield self.event(EventKind.ERROR, exc.message, fatal=True, reason=exc.kind)
                        return
                    if exc.message != said_error:
                        said_error = exc.message
                        yield self.event(
                            EventKind.ERROR, exc.message + " (retrying)", fatal=False, reason=exc.kind
                        )
                    yield self.event(
                        EventKind.RECONNECTING,
                        f"reconnecting to {self.host} in {exc.delay:.1f} s (attempt {exc.attempt + 1})",
                        attempt=exc.attempt + 1,
                        delay=round(exc.delay, 3),
                    )
                    continue
                said_error = None
                if conn is not last_conn:
                    again = last_conn is not None or self.file.opened_once
                    last_conn = conn
                    sh = self.shared
                    yield self.event(
                        EventKind.CONNECTED,
                        f"{'reconnected' if again else 'connected'} to {self.host} "
                        f"({sh.where}, {sh.server_version or 'ssh'}){sh.host_key_note}",
                        host=self.target.host,
                        where=sh.where,
                        reconnect=again,
                        server_version=sh.server_version,
                    )
                try:
                    async for b in Session(self, self.file, self._channels, conn).run():
                        yield b
                    return
                except Lost as lost:
                    self._channels.stop()
                    self.shared.mark_lost(conn)
                    yield self.event(
                        EventKind.RECONNECTING,
                        f"connection to {self.host} lost ({lost}); "
                        f"reconnecting, will resume at byte {self.file.splitter.pos}",
                        attempt=1,
                        delay=round(max(0.0, self.shared.next_at - asyncio.get_running_loop().time()), 3),
                    )
        finally:
            await self._cleanup()

    # -- the reader's command ----------------------------------------------------------------
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
        source does. Mode ``first`` is the source's start (``start``, ``end``, ``last`` N lines)
        for the first file opened, the start of the file after that."""
        if mode == "first":
            s = self.start if not self.file.opened_once else START
            mode, lines = {"start": "start", "end": "end", "last": "last"}[s.mode], s.lines
        return reader_command(
            self.tag,
            self.nonce,
            self.rp,
            name,
            expect=expect or self.file.identity or "-",
            offset=self.file.splitter.pos if offset is None else offset,
            mode=mode,
            lines=lines,
            interval=self.settings.status_interval,
            follow=self.follow if follow is None else follow,
            sums=sums,
            ranges=ranges,
        )

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
