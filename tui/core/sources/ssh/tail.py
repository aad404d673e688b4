"""The follow loop of an SSH source on one connection: the reader channel (header, data, status,
tail's messages), the lister channel of a glob, and the timers (retry, idle).

Opening a file, and deciding where to resume after a reconnect, a rotation or a truncation, is
:class:`.opening.Opener`; the session and its opener share the connection's reading state
(:class:`.state.ConnState`) and the source's :class:`.state.FileState`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from tui.core.sources.aio import wait_for
from tui.core.sources.base import Batch, EventKind, LineBatch, SourceEvent
from tui.core.sources.compressed import Inflater
from tui.core.sources.identity import Decision
from tui.core.sources.lines import make_batch
from tui.core.sources.ssh import catchup
from tui.core.sources.ssh.channels import Channels, raise_if_lost
from tui.core.sources.ssh.opening import Opener, inode_of
from tui.core.sources.ssh.remote_side import Entry, Status, describe_tail_message
from tui.core.sources.ssh.scripts import lister_command
from tui.core.sources.ssh.shared import ChannelRefused, lister_blocks
from tui.core.sources.ssh.state import ConnState, FileState, SessionOwner

# Seconds a started reader may go without its header before the host is said to be slow to run
# it. Every command over SSH runs through the account's login shell, so a slow ~/.bashrc (a
# pyenv rehash waiting for a lock, a network mount, a conda init) delays each one; without the
# notice a pane says "connected" and nothing more.
READER_START_WARN_S = 10.0


class Session:
    """The follow loop on one connection: the reader's output, the lister's listings and the
    timers, in order. Raises :class:`.channels.Lost` when the connection fails."""

    def __init__(self, src: SessionOwner, file: FileState, channels: Channels, conn) -> None:
        self.src = src
        self.file = file
        self.channels = channels
        self.conn = conn
        self.q: asyncio.Queue = asyncio.Queue(64)
        self.loop = asyncio.get_running_loop()
        self.cs = ConnState(last_data=self.loop.time())
        self.opener = Opener(src, file, self.cs, channels, conn, self.q)

    def feed(self, data: bytes, path: str | None) -> LineBatch | None:
        inf = self.cs.inflater
        if isinstance(inf, Inflater):  # a compressed file of a catch-up: decompressed here
            data = b"".join(inf.feed(data))
            if self.cs.skip:
                cut = min(self.cs.skip, len(data))
                data, self.cs.skip = data[cut:], self.cs.skip - cut
            if not data:
                return None
        self.file.fingerprint.feed(data)
        return make_batch(self.src.name, self.file.splitter.feed(data), path)

    def ev(self, kind: EventKind, message: str, name: str | None = None, **data) -> SourceEvent:
        return self.src.event(kind, message, name, **data)

    def display(self, name: str | None) -> str:
        return self.src.display(name)

    # -- the loop ----------------------------------------------------------------------------

    async def run(self) -> AsyncIterator[Batch]:
        src = self.src
        if src.rp.glob:
            attempt = 0
            while True:
                try:
                    await self.channels.start(
                        self.conn,
                        "lister",
                        lister_command(
                            src.tag, src.rp, interval=src.settings.status_interval, once=not src.follow
                        ),
                        self.q,
                    )
                    break
                except ChannelRefused as exc:
                    attempt += 1
                    if attempt == 1:
                        yield self.ev(EventKind.ERROR, f"{exc} (retrying)", fatal=False)
                    await asyncio.sleep(src.settings.delay(attempt))
            if self.file.current is not None:
                await self.opener.open(self.file.current)
        elif self.file.catchup is not None:
            # the connection went while the rotated set was read: what is left of it is listed
            # again (not the file at the name opened, which would end the catch-up unsaid)
            if self.cs.step is not None:  # a file of it was being read: again from its last whole line
                sp = self.file.splitter
                sp.reset(sp.line_start, sp.line_no)
                self.cs.step = self.cs.inflater = None
            self.cs.steps = []
            async for b in catchup.begin(self.opener):
                yield b
        else:
            await self.opener.open(src.rp.base)
        while not self.cs.done:
            if self.cs.refused is not None:
                if self.cs.refused != self.cs.error_said:
                    self.cs.error_said = self.cs.refused
                    yield self.ev(EventKind.ERROR, self.cs.refused + " (retrying)", fatal=False)
                self.cs.refused = None
            item = await self._next()
            if item is None:
                async for b in self._timers():
                    yield b
                continue
            role, proc, value = item
            if role == "reader" and proc is self.cs.reader:
                assert self.cs.demux is not None
                for part in self.cs.demux.feed(value):
                    async for b in self._part(part):
                        yield b
                    if self.cs.done or proc is not self.cs.reader:
                        break
            elif role == "reader_eof" and proc is self.cs.reader:
                async for b in self._reader_end(value):
                    yield b
            elif role == "lister":
                for entries in self._blocks(value):
                    async for b in self._listed(entries):
                        yield b
            elif role == "lister_eof":
                lister_exc, stderr = value
                raise_if_lost(self.conn, lister_exc)
                await asyncio.sleep(0.05)
                raise_if_lost(self.conn, lister_exc)
                if not src.follow:
                    if not self.cs.listed:
                        self.file.error = (
                            f"cannot list {self.display(src.rp.base)}: {_text(stderr) or 'no answer'}"
                        )
                        yield self.ev(EventKind.ERROR, self.file.error, fatal=True)
                        return
                    continue
                yield self.ev(
                    EventKind.ERROR,
                    f"listing {src.rp.text} on {src.host} stopped "
                    f"({_text(stderr) or 'no answer'}); restarting",
                    fatal=False,
                )
                await asyncio.sleep(src.settings.delay(1))
                await self.channels.start(
                    self.conn,
                    "lister",
                    lister_command(src.tag, src.rp, interval=src.settings.status_interval),
                    self.q,
                )

    async def _next(self):
        deadlines = [d for d in (self.cs.retry_at,) if d is not None]
        src = self.src
        if src.idle_after and not self.cs.idle_said and self.file.current is not None and src.follow:
            deadlines.append(self.cs.last_data + src.idle_after)
        if (slow := self._slow_start_at()) is not None:
            deadlines.append(slow)
        if not deadlines:
            return await self.q.get()
        timeout = max(0.0, min(deadlines) - self.loop.time())
        try:
            return await wait_for(self.q.get(), timeout)
        except TimeoutError:
            return None

    def _slow_start_at(self) -> float | None:
        """When to say that the host has not started the reader (None: nothing to say)."""
        cs = self.cs
        if cs.slow_start_said or cs.header or cs.reader is None or cs.reader_since is None:
            return None
        return cs.reader_since + READER_START_WARN_S

    async def _timers(self) -> AsyncIterator[Batch]:
        now = self.loop.time()
        slow = self._slow_start_at()
        if slow is not None and now >= slow:
            self.cs.slow_start_said = True
            src = self.src
            yield self.ev(
                EventKind.WAITING,
                f"{self.display(self.cs.pending_name or src.rp.base)}: the host has not started reading it "
                f"{READER_START_WARN_S:g} s after it was asked; still waiting. Every command there runs "
                "through the account's login shell: a slow ~/.bashrc or ~/.profile delays each one "
                "(a link that stopped answering is noticed by the keepalive)",
                reason="slow_start",
                seconds=READER_START_WARN_S,
            )
        if self.cs.retry_at is not None and now >= self.cs.retry_at:
            self.cs.retry_at = None
            name = self.cs.pending_name or self.file.current or self.src.rp.base
            await self.opener.open(name)
        src = self.src
        if src.idle_after and not self.cs.idle_said and now >= self.cs.last_data + src.idle_after:
            self.cs.idle_said = True
            yield self.ev(EventKind.IDLE, f"no new line for {src.idle_after:g} s", seconds=src.idle_after)

    # -- the reader --------------------------------------------------------------------------

    async def _part(self, part: tuple[str, object]) -> AsyncIterator[Batch]:
        kind, value = part
        if kind == "header":
            async for b in self.opener.on_header(value):  # type: ignore[arg-type]
                yield b
            return
        if not self.cs.verified:
            if kind != "status":
                self.cs.held.append(part)
                return
            st: Status = value  # type: ignore[assignment]
            if st.open is not None and st.open.identity != self.file.identity:
                # the name changed between the remote stat and tail's open: read it again
                self.cs.held = []
                await self.opener.open(self.cs.pending_name or self.src.rp.base)
                return
            self.cs.verified = True
            held, self.cs.held = self.cs.held, []
            for p in held:
                async for b in self._part(p):
                    yield b
        if kind == "data":
            self.cs.last_data = self.loop.time()
            self.cs.idle_said = False
            batch = self.feed(value, self.display(self.file.current))  # type: ignore[arg-type]
            if batch is not None:
                yield batch
        elif kind == "status":
            async for b in self._status(value):  # type: ignore[arg-type]
                yield b
        elif kind == "tail":
            what, msg = describe_tail_message(value, self.src.nonce)  # type: ignore[arg-type]
            if what == "truncated":  # first the rest of the old content, from a copy if one holds it
                self.cs.seen_size = self.cs.open_size
                async for b in catchup.reprobe(
                    self.opener, self.cs.pending_name or self.file.current or self.src.rp.base
                ):
                    yield b
            else:
                yield self.ev(EventKind.STDERR, msg, lines=[msg])

    async def _status(self, st: Status) -> AsyncIterator[Batch]:
        src = self.src
        size = st.open.size if st.open is not None else None
        if size != self.cs.open_size:
            self.cs.open_size, self.cs.grew_at = size, self.loop.time()
        if not src.rp.glob:
            if st.name is None:
                if not self.cs.waiting_said:
                    self.cs.waiting_said = True
                    yield self.ev(
                        EventKind.WAITING,
                        f"{self.display(self.file.current)} was removed or renamed; waiting for it to come back",
                    )
            elif st.name.identity != self.file.identity:
                if self.cs.switch is None:
                    self.cs.switch = (src.rp.base, self.loop.time(), self.file.splitter.pos)
            elif self.cs.waiting_said:
                self.cs.waiting_said = False
                yield self.ev(
                    EventKind.OPENED,
                    f"{self.display(self.file.current)} is back",
                    inode=inode_of(self.file.identity),
                    size=st.name.size,
                    offset=self.file.splitter.pos,
                )
        if self.cs.switch is not None:
            # the old file is read until it has been quiet (no growth) for the settle time,
            # however long it is still written: tail keeps it open
            name, since, noticed = self.cs.switch
            pos, now = self.file.splitter.pos, self.loop.time()
            drained = self.cs.open_size is None or pos >= self.cs.open_size
            quiet = now - max(since, self.cs.grew_at)
            if drained and quiet >= src.settings.settle:
                self.cs.switch = None
                after = None
                if self.cs.open_size is not None:
                    which = "the old one" if name == self.file.current else self.display(self.file.current)
                    late = (
                        f", {pos - noticed} bytes of it after the change was noticed" if pos > noticed else ""
                    )
                    note = f"{which} was read to its end (to byte {pos}{late}, then no new bytes for {quiet:.1f} s)"
                    after = Decision("rotated", old_note=note, old_rest="read")
                if src.rp.glob:
                    await self.opener.open(name, drained=self.cs.open_size is not None, after=after)
                else:  # every generation of the rotated set not read to its end, then the name
                    async for b in catchup.begin(self.opener, after):
                        yield b

    async def _reader_end(self, value) -> AsyncIterator[Batch]:
        src = self.src
        exc, stderr = value
        raise_if_lost(self.conn, exc)
        await asyncio.sleep(0.05)  # a closing connection says so a moment after its channels end
        raise_if_lost(self.conn, exc)
        if self.cs.step is not None and not self.cs.header:  # a catch-up file's reader failed: list again
            async for x in catchup.step_done(self.opener, False):
                yield x
            return
        if not self.cs.header:
            text = _text(stderr) or "no answer"
            message = f"cannot run the reader on {src.host}: {text}"
            if not self.file.opened_once:
                self.file.error = message
                self.cs.done = True
                yield self.ev(EventKind.ERROR, message, fatal=True)
                return
            yield self.ev(EventKind.ERROR, message + " (retrying)", fatal=False)
            self.cs.retry_at = self.loop.time() + src.settings.delay(1)
            return
        if self.cs.retry_at is not None or self.file.error is not None or self.cs.failed:
            return  # the open failed and said so; the retry timer (or the lister) runs
        if self.cs.step is not None:  # a file of a catch-up was read to its end
            b = self._held_data()
            if b is not None:
                yield b
            async for x in catchup.step_done(self.opener, True):
                yield x
            return
        if self.cs.draining is not None:
            b = self._held_data()
            if b is not None:
                yield b
            await self.opener.drained(True)
            return
        if not src.follow:
            b = self._held_data()
            if b is not None:
                yield b
            b = make_batch(src.name, self.file.splitter.flush(), self.display(self.file.current))
            if b is not None:
                yield b
            self.cs.done = True
            yield self.ev(
                EventKind.EOF, f"end of {self.display(self.file.current)}", offset=self.file.splitter.pos
            )
            return
        msg = _text(stderr)
        yield self.ev(
            EventKind.ERROR, f"tail on {src.host} ended{': ' + msg if msg else ''}; restarting", fatal=False
        )
        self.cs.retry_at = self.loop.time() + src.settings.delay(1)

    def _held_data(self) -> LineBatch | None:
        """The bytes the demux held back as a possible marker: data after all (the reader ended)."""
        if self.cs.demux is None or not self.cs.demux.pending:
            return None
        b = self.feed(self.cs.demux.pending, self.display(self.file.current))
        self.cs.demux.pending = b""
        return b

    # -- the lister (globs) ------------------------------------------------------------------

    def _blocks(self, data: bytes) -> list[list[Entry]]:
        blocks, self.cs.lister_block = lister_blocks(self.cs.lister_block + data, self.src.tag.encode())
        return blocks

    async def _listed(self, entries: list[Entry]) -> AsyncIterator[Batch]:
        src = self.src
        self.cs.listed = True
        if entries and entries[0].kind == "error":
            async for b in self.opener.open_failed("notfound", ["stat"], src.rp.base):
                yield b
            return
        found = sorted((e for e in entries if e.regular), key=lambda e: (e.mtime, e.name))
        self.cs.matches = len(found)
        if self.file.current is None:
            if self.cs.pending_name is not None and self.cs.reader is not None and not self.cs.header:
                return  # opening one already
            if not found:
                if not src.follow:
                    self.file.error = f"no file matches {self.display(src.rp.base)}"
                    self.cs.done = True
                    yield self.ev(EventKind.ERROR, self.file.error, fatal=True)
                elif not self.cs.waiting_said:
                    self.cs.waiting_said = True
                    yield self.ev(
                        EventKind.WAITING, f"no file matches {self.display(src.rp.base)} yet; waiting for one"
                    )
                return
            self.file.known = {e.identity for e in found}
            await self.opener.open(found[-1].name)
            return
        for e in found:
            if e.identity == self.file.identity:
                self.file.cur_mtime = e.mtime
        known = self.file.known or set()
        newer = [
            e
            for e in found
            if e.identity not in known and e.identity != self.file.identity and e.mtime >= self.file.cur_mtime
        ]
        if newer and self.cs.switch is None:
            self.file.known = {e.identity for e in found}
            self.cs.switch = (newer[-1].name, self.loop.time(), self.file.splitter.pos)
        if self.cs.failed and found:  # the current name is gone: the newest match now (probed first,
            # so a file renamed within the pattern, or a new one on a reused inode, is told apart)
            name = self.cs.switch[0] if self.cs.switch is not None else found[-1].name
            self.cs.switch = None
            self.file.known = {e.identity for e in found}
            await self.opener.open(name)


def _text(stderr: list[bytes]) -> str:
    text = b"".join(stderr).decode("utf-8", "replace").strip()
    return text.splitlines()[-1][:300] if text else ""
