"""The follow loop of an SSH source on one connection: the reader channel (header, data, status,
tail's messages), the lister channel of a glob, and the timers (retry, idle).

Opening a file, and deciding where to resume after a reconnect, a rotation or a truncation, is
:class:`.opening.Opener` (the base class of :class:`Session`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from tui.core.sources.aio import wait_for
from tui.core.sources.base import Batch, EventKind, LineBatch
from tui.core.sources.lines import make_batch
from tui.core.sources.ssh.opening import Opener, inode_of
from tui.core.sources.ssh.remote_side import Entry, Status, describe_tail_message
from tui.core.sources.ssh.scripts import lister_command
from tui.core.sources.ssh.shared import ChannelRefused, lister_blocks


class Session(Opener):
    """The follow loop: the reader's output, the lister's listings and the timers, in order."""

    # -- the loop ----------------------------------------------------------------------------

    async def run(self) -> AsyncIterator[Batch]:
        src = self.src
        if src.rp.glob:
            attempt = 0
            while True:
                try:
                    await src._start(
                        self.conn,
                        "lister",
                        lister_command(
                            src._tag, src.rp, interval=src.settings.status_interval, once=not src.follow
                        ),
                        self.q,
                    )
                    break
                except ChannelRefused as exc:
                    attempt += 1
                    if attempt == 1:
                        yield self.ev(EventKind.ERROR, f"{exc} (retrying)", fatal=False)
                    await asyncio.sleep(src.settings.delay(attempt))
            if src.current is not None:
                await self.open(src.current)
        else:
            await self.open(src.rp.base)
        while not self.done:
            if self.refused is not None:
                if self.refused != self.error_said:
                    self.error_said = self.refused
                    yield self.ev(EventKind.ERROR, self.refused + " (retrying)", fatal=False)
                self.refused = None
            item = await self._next()
            if item is None:
                async for b in self._timers():
                    yield b
                continue
            role, proc, value = item
            if role == "reader" and proc is self.reader:
                assert self.demux is not None
                for part in self.demux.feed(value):
                    async for b in self._part(part):
                        yield b
                    if self.done or proc is not self.reader:
                        break
            elif role == "reader_eof" and proc is self.reader:
                async for b in self._reader_end(value):
                    yield b
            elif role == "lister":
                for entries in self._blocks(value):
                    async for b in self._listed(entries):
                        yield b
            elif role == "lister_eof":
                lister_exc, stderr = value
                src._lost_or(self.conn, lister_exc)
                await asyncio.sleep(0.05)
                src._lost_or(self.conn, lister_exc)
                if not src.follow:
                    if not self.listed:
                        src.error = f"cannot list {self.display(src.rp.base)}: {_text(stderr) or 'no answer'}"
                        yield self.ev(EventKind.ERROR, src.error, fatal=True)
                        return
                    continue
                yield self.ev(
                    EventKind.ERROR,
                    f"listing {src.rp.text} on {src.host} stopped "
                    f"({_text(stderr) or 'no answer'}); restarting",
                    fatal=False,
                )
                await asyncio.sleep(src.settings.delay(1))
                await src._start(
                    self.conn,
                    "lister",
                    lister_command(src._tag, src.rp, interval=src.settings.status_interval),
                    self.q,
                )

    async def _next(self):
        deadlines = [d for d in (self.retry_at,) if d is not None]
        src = self.src
        if src.idle_after and not self.idle_said and src.current is not None and src.follow:
            deadlines.append(self.last_data + src.idle_after)
        if not deadlines:
            return await self.q.get()
        timeout = max(0.0, min(deadlines) - self.loop.time())
        try:
            return await wait_for(self.q.get(), timeout)
        except TimeoutError:
            return None

    async def _timers(self) -> AsyncIterator[Batch]:
        now = self.loop.time()
        if self.retry_at is not None and now >= self.retry_at:
            self.retry_at = None
            name = self.pending_name or self.src.current or self.src.rp.base
            await self.open(name)
        src = self.src
        if src.idle_after and not self.idle_said and now >= self.last_data + src.idle_after:
            self.idle_said = True
            yield self.ev(EventKind.IDLE, f"no new line for {src.idle_after:g} s", seconds=src.idle_after)

    # -- the reader --------------------------------------------------------------------------

    async def _part(self, part: tuple[str, object]) -> AsyncIterator[Batch]:
        kind, value = part
        if kind == "header":
            async for b in self._header(value):  # type: ignore[arg-type]
                yield b
            return
        if not self.verified:
            if kind != "status":
                self.held.append(part)
                return
            st: Status = value  # type: ignore[assignment]
            if st.open is not None and st.open.identity != self.src.identity:
                # the name changed between the remote stat and tail's open: read it again
                self.held = []
                await self.open(self.pending_name or self.src.rp.base)
                return
            self.verified = True
            held, self.held = self.held, []
            for p in held:
                async for b in self._part(p):
                    yield b
        if kind == "data":
            src = self.src
            self.last_data = self.loop.time()
            self.idle_said = False
            batch = self.feed(value, self.display(src.current))  # type: ignore[arg-type]
            if batch is not None:
                yield batch
        elif kind == "status":
            async for b in self._status(value):  # type: ignore[arg-type]
                yield b
        elif kind == "tail":
            what, msg = describe_tail_message(value, self.src._nonce)  # type: ignore[arg-type]
            if what == "truncated":
                async for b in self._truncated(
                    f"{self.display(self.src.current)} was truncated; reading it again from the start"
                ):
                    yield b
            else:
                yield self.ev(EventKind.STDERR, msg, lines=[msg])

    async def _status(self, st: Status) -> AsyncIterator[Batch]:
        src = self.src
        self.open_size = st.open.size if st.open is not None else None
        if not src.rp.glob:
            if st.name is None:
                if not self.waiting_said:
                    self.waiting_said = True
                    yield self.ev(
                        EventKind.WAITING,
                        f"{self.display(src.current)} was removed or renamed; waiting for it to come back",
                    )
            elif st.name.identity != src.identity:
                if self.switch is None:
                    self.switch = (src.rp.base, self.loop.time())
            elif self.waiting_said:
                self.waiting_said = False
                yield self.ev(
                    EventKind.OPENED,
                    f"{self.display(src.current)} is back",
                    inode=inode_of(src.identity),
                    size=st.name.size,
                    offset=src.splitter.pos,
                )
        if self.switch is not None:
            name, since = self.switch
            drained = self.open_size is None or src.splitter.pos >= self.open_size
            if drained and self.loop.time() >= since + src.settings.settle:
                self.switch = None
                await self.open(name, drained=self.open_size is not None)

    async def _reader_end(self, value) -> AsyncIterator[Batch]:
        src = self.src
        exc, stderr = value
        src._lost_or(self.conn, exc)
        await asyncio.sleep(0.05)  # a closing connection says so a moment after its channels end
        src._lost_or(self.conn, exc)
        if not self.header:
            text = _text(stderr) or "no answer"
            message = f"cannot run the reader on {src.host}: {text}"
            if not src._opened_once:
                src.error = message
                self.done = True
                yield self.ev(EventKind.ERROR, message, fatal=True)
                return
            yield self.ev(EventKind.ERROR, message + " (retrying)", fatal=False)
            self.retry_at = self.loop.time() + src.settings.delay(1)
            return
        if self.retry_at is not None or src.error is not None or self.failed:
            return  # the open failed and said so; the retry timer (or the lister) runs
        if self.draining is not None:
            b = self._held_data()
            if b is not None:
                yield b
            await self._drained(True)
            return
        if not src.follow:
            b = self._held_data()
            if b is not None:
                yield b
            b = make_batch(src.name, src.splitter.flush(), self.display(src.current))
            if b is not None:
                yield b
            self.done = True
            yield self.ev(EventKind.EOF, f"end of {self.display(src.current)}", offset=src.splitter.pos)
            return
        msg = _text(stderr)
        yield self.ev(
            EventKind.ERROR, f"tail on {src.host} ended{': ' + msg if msg else ''}; restarting", fatal=False
        )
        self.retry_at = self.loop.time() + src.settings.delay(1)

    def _held_data(self) -> LineBatch | None:
        """The bytes the demux held back as a possible marker: data after all (the reader ended)."""
        if self.demux is None or not self.demux.pending:
            return None
        b = self.feed(self.demux.pending, self.display(self.src.current))
        self.demux.pending = b""
        return b

    # -- the lister (globs) ------------------------------------------------------------------

    def _blocks(self, data: bytes) -> list[list[Entry]]:
        blocks, self.lister_block = lister_blocks(self.lister_block + data, self.src._tag.encode())
        return blocks

    async def _listed(self, entries: list[Entry]) -> AsyncIterator[Batch]:
        src = self.src
        self.listed = True
        if entries and entries[0].kind == "error":
            async for b in self._open_failed("notfound", ["stat"], src.rp.base):
                yield b
            return
        found = sorted((e for e in entries if e.regular), key=lambda e: (e.mtime, e.name))
        self.matches = len(found)
        if src.current is None:
            if self.pending_name is not None and self.reader is not None and not self.header:
                return  # opening one already
            if not found:
                if not src.follow:
                    src.error = f"no file matches {self.display(src.rp.base)}"
                    self.done = True
                    yield self.ev(EventKind.ERROR, src.error, fatal=True)
                elif not self.waiting_said:
                    self.waiting_said = True
                    yield self.ev(
                        EventKind.WAITING, f"no file matches {self.display(src.rp.base)} yet; waiting for one"
                    )
                return
            src.known = {e.identity for e in found}
            await self.open(found[-1].name)
            return
        for e in found:
            if e.identity == src.identity:
                src.cur_mtime = e.mtime
        known = src.known or set()
        newer = [
            e
            for e in found
            if e.identity not in known and e.identity != src.identity and e.mtime >= src.cur_mtime
        ]
        if newer and self.switch is None:
            src.known = {e.identity for e in found}
            self.switch = (newer[-1].name, self.loop.time())
        if self.failed and found:  # the current name is gone: the newest match now (probed first,
            # so a file renamed within the pattern, or a new one on a reused inode, is told apart)
            name = self.switch[0] if self.switch is not None else found[-1].name
            self.switch = None
            src.known = {e.identity for e in found}
            await self.open(name)


def _text(stderr: list[bytes]) -> str:
    text = b"".join(stderr).decode("utf-8", "replace").strip()
    return text.splitlines()[-1][:300] if text else ""
