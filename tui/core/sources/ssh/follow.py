"""The follow loop of an SSH source on one connection: the reader channel (header, data, status,
tail's messages), the lister channel of a glob, and the timers (retry, idle).

Identity checks: the header names the file the remote side opened; the first status record
names the file ``tail`` really has open (``/proc/PID/fd``). Data is held back until they agree,
so a rotation between the two cannot mix two files. A rotation or a newer glob match is
carried out only once everything the old file held when it was last looked at has arrived.

Coming back to a file without a live ``tail`` on it (a reconnect, a retry), the reader checks
it first (mode ``verify``): same identity, not shorter, and the same ``cksum`` of the bytes the
source's :class:`.identity.Fingerprint` holds; then it resumes at the offset (no extra round
trip). Otherwise it answers ``moved`` and a probe (:data:`.scripts.PROBE`) gathers the facts:
the name's identity, size and checksums, where the old file went (and, after a truncation,
whether a copy holds the old bytes); :func:`.identity.decide` says read again from the start
(``truncated``) or ``rotated``, the rest of the old file (or copy) read first when it is there.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import asyncssh

from tui.core.sources.aio import wait_for
from tui.core.sources.base import Batch, EventKind, LineBatch
from tui.core.sources.identity import Decision, FileLook, Look, decide, drained_note
from tui.core.sources.lines import make_batch
from tui.core.sources.ssh.remote import (
    Entry,
    Probe,
    ReaderDemux,
    Status,
    describe_tail_message,
    parse_probe,
)
from tui.core.sources.ssh.scripts import (
    copies_command,
    expected_sums,
    lister_command,
    probe_command,
    reader_command,
)
from tui.core.sources.ssh.shared import ChannelRefused, lister_blocks

if TYPE_CHECKING:
    from tui.core.sources.ssh.source import SshSource

_NEED = {"tail": "tail", "stat": "stat", "head": "head", "wc": "wc"}


def _ino(identity: str | None) -> int | None:
    try:
        return int(identity.split(":")[1]) if identity else None
    except (IndexError, ValueError):
        return None


class Session:
    def __init__(self, src: SshSource, conn) -> None:
        self.src = src
        self.conn = conn
        self.q: asyncio.Queue = asyncio.Queue(64)
        self.loop = asyncio.get_running_loop()
        self.reader = None
        self.demux: ReaderDemux | None = None
        self.pending_name: str | None = None  # being opened
        self.header = False
        self.verified = True
        self.held: list[tuple[str, object]] = []
        self.open_size: int | None = None
        self.switch: tuple[str, float] | None = None  # name to switch to, when decided
        self.retry_at: float | None = None
        self.waiting_said = False
        self.error_said: str | None = None
        self.last_data = self.loop.time()
        self.idle_said = False
        self.done = False
        self.matches = 0
        self.lister_block = b""
        self.listed = False
        self.refused: str | None = None
        self.decision: Decision | None = None  # what the last probe decided, for the header's event
        self.draining: Decision | None = None  # reading the rest of a rotated-away file
        self.failed = False
        self.verifying = False  # the reader checks the file itself (mode verify)
        self.probed: tuple[str, int] | None = None  # the last (identity, offset) probed

    def feed(self, data: bytes, path: str | None) -> LineBatch | None:
        self.src.fingerprint.feed(data)
        return make_batch(self.src.name, self.src.splitter.feed(data), path)

    def reset(self, start: int, line_no: int) -> None:
        self.src.splitter.reset(start, line_no)
        self.src.fingerprint.reset(start)

    def ev(self, kind: EventKind, message: str, name: str | None = None, **data):
        return self.src._event(kind, message, name, **data)

    def display(self, name: str | None) -> str:
        return self.src.path_of(name) or self.src.name

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
    async def open(
        self, name: str, *, drained: bool = False, after: Decision | None = None, probe: bool = False
    ) -> None:
        """Starts the reader on ``name``. A file read before and not ``drained`` through a live
        ``tail`` is checked by the reader itself (``verify``: identity, size, checksums); when
        that fails (``probe``) a probe finds out what happened (see the module notes).
        ``after``: the decision whose old file was just read to its end (for the event)."""
        src = self.src
        mode = "first" if not src._opened_once and src.identity is None else "resume"
        self.pending_name = name
        self.header = False
        self.verified = not src.follow
        self.held = []
        self.open_size = None
        self.demux = ReaderDemux(src._tag, src._nonce)
        self.decision, self.draining = after, None
        self.failed = False  # the header said the file could not be opened
        self.verifying = False
        cmd = None
        check = mode == "resume" and src.follow and not drained and src.identity is not None
        if check and not probe:
            fp = src.fingerprint
            if fp.pos != src.splitter.pos:  # not kept in step (cannot happen): trust identity and size only
                fp.reset(src.splitter.pos)
            self.verifying = True
            cmd = reader_command(
                src._tag,
                src._nonce,
                src.rp,
                name,
                expect=src.identity or "-",
                offset=src.splitter.pos,
                mode="verify",
                interval=src.settings.status_interval,
                sums=expected_sums(fp.chunks()),
                ranges=fp.ranges(),
            )
        elif check and src.identity is not None:
            self.probed = (src.identity, src.splitter.pos)
            try:
                d = self.decision = await self._probe(name, src.identity)
            except ChannelRefused as exc:
                self.refused = str(exc)
                self.header = True
                self.reader = None
                self.retry_at = self.loop.time() + src.settings.delay(2)
                return
            if d.drain is not None:  # the rest of the old file (or its copy) first, under its new name
                self.draining, self.verified = d, True
                cmd = self._reader(d.drain[0], d.drain[1], False, d.drain_identity)
            elif d.action == "restart":
                cmd = self._reader(name, 0, True)
        elif after is not None and after.action == "restart":
            cmd = self._reader(name, 0, True)
        try:
            await src._start(self.conn, "reader", cmd or src._reader_cmd(name, mode), self.q)
        except ChannelRefused as exc:
            self.refused = str(exc)
            self.header = True
            self.reader = None
            self.retry_at = self.loop.time() + src.settings.delay(2)
            return
        self.reader = src._procs["reader"]

    def _reader(self, name: str, offset: int, follow: bool, expect: str | None = None) -> str:
        src = self.src
        return reader_command(
            src._tag,
            src._nonce,
            src.rp,
            name,
            expect=expect or src.identity or "-",
            offset=offset,
            mode="resume",
            interval=src.settings.status_interval,
            follow=follow,
        )

    async def _probe(self, name: str, identity: str) -> Decision:
        """What became of the file read to ``splitter.pos`` (a short command on the host; a
        second one looks for a copy when the file was truncated)."""
        src = self.src
        fp, pos = src.fingerprint, src.splitter.pos
        if fp.pos != pos:  # not kept in step (cannot happen): trust identity and size only
            fp.reset(pos)
        probe = await self._run(probe_command(src._tag, src.rp, name, identity, fp.ranges()))

        def look(e: Entry | None, which: str) -> FileLook | None:
            if e is None or not e.regular:
                return None
            return FileLook(e.identity, e.size, fp.same_sums(probe.sums.get(which, {})), e.name)

        found = Look(look(probe.name, "name"), look(probe.old, "old"))
        d = decide(identity, pos, found)
        if d.action != "restart" or pos == 0:
            return d
        probe = await self._run(copies_command(src._tag, src.rp, name, pos, fp.ranges()))
        copies = tuple(look(e, f"k{i}") for i, e in enumerate(probe.copies))
        return decide(identity, pos, Look(found.at_name, None, tuple(c for c in copies if c is not None)))

    async def _run(self, cmd: str) -> Probe:
        src = self.src
        timeout = (src.settings.connect_timeout or 10.0) * 3
        try:
            result = await wait_for(
                self.conn.run(cmd, encoding=None, stdin=asyncssh.DEVNULL, check=False), timeout
            )
        except asyncssh.ChannelOpenError as exc:
            src._lost_or(self.conn, None)  # raises (lost) when the connection is closed
            raise ChannelRefused(
                f"{src.host} refused a new session ({exc.reason or exc}); sshd allows "
                "MaxSessions (10 by default) per connection"
            ) from None
        except TimeoutError:  # a ConnectionError is "lost" for _lost_or
            src._lost_or(self.conn, ConnectionError(f"no answer to the file check within {timeout:g} s"))
            raise
        except (asyncssh.Error, OSError) as exc:
            src._lost_or(self.conn, exc)
            src._lost_or(self.conn, ConnectionError(str(exc)))
            raise
        return parse_probe(result.stdout if isinstance(result.stdout, bytes) else b"", src._tag)

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

    async def _truncated(self, message: str, old_rest: str | None = None) -> AsyncIterator[Batch]:
        src = self.src
        b = make_batch(src.name, src.splitter.flush(), self.display(src.current))
        if b is not None:
            yield b
        old = src.splitter.pos
        self.reset(0, 1)
        extra = {"old_rest": old_rest} if old_rest else {}
        yield self.ev(EventKind.TRUNCATED, message, old_size=old, inode=_ino(src.identity), **extra)

    async def _header(self, fields: list[str]) -> AsyncIterator[Batch]:
        src = self.src
        name = self.pending_name or src.rp.base
        self.header = True
        ok = bool(fields) and fields[0] == "ok" and len(fields) >= 5
        moved = fields[:2] == ["err", "moved"]  # not the same file read to the same point
        gone = (
            self.verifying
            and fields[:2] == ["err", "enoent"]
            and self.probed != (src.identity, src.splitter.pos)
        )
        if moved or gone:  # probe (once for a missing name: the old file may be under another name)
            await self.open(name, probe=True)
            return
        if self.draining is not None:  # the old file (or copy) must still be the one probed
            if not ok or fields[1] != self.draining.drain_identity or int(fields[3]) != src.splitter.pos:
                await self._drained(False)
            return
        if not ok:
            async for b in self._open_failed(fields[1] if len(fields) > 1 else "unknown", fields[2:], name):
                yield b
            return
        identity, size, start = fields[1], int(fields[2]), int(fields[3])
        line_no = int(fields[4]) if fields[4].isdigit() else src.splitter.line_no
        prev, prev_name = src.identity, src.current
        self.waiting_said = False
        self.error_said = None
        if self.switch is not None and self.switch[0] == name:  # (a newer match listed meanwhile stays)
            self.switch = None
        self.last_data = self.loop.time()
        self.retry_at = None
        if prev is not None and identity == prev and start == src.splitter.pos:
            pass  # resumed exactly where we were
        elif prev is not None and identity == prev:
            src.current = name
            d = self.decision
            if d is not None and d.action == "restart":
                why = d.why + (f"; {d.old_note}" if d.old_note else "")
            else:
                why = f"shrank to {size} bytes (it was read to byte {src.splitter.pos})"
            rest = d.old_rest if d is not None and d.action == "restart" and d.old_rest else None
            async for b in self._truncated(
                f"{self.display(name)} {why}; reading it again from the start", rest
            ):
                yield b
        elif prev is not None:
            last = make_batch(src.name, src.splitter.flush(), self.display(prev_name))
            if last is not None:
                yield last
            old_pos = src.splitter.pos
            self.reset(start, line_no)
            src.identity, src.current = identity, name
            d = self.decision if self.decision is not None and self.decision.old_note else None
            old = d.old_note if d is not None else "finished reading the old one"
            if name == prev_name:
                kind = EventKind.ROTATED
                msg = f"{self.display(name)} now points at a new file (rotated); {old}; reading the new one"
            else:
                kind = EventKind.SWITCHED
                old = d.old_note if d is not None else f"finished reading {self.display(prev_name)}"
                msg = f"{self.display(name)} is a newer match of {src.rp.text}; {old}"
            yield self.ev(
                kind,
                msg,
                name,
                old_path=self.display(prev_name),
                old_inode=_ino(prev),
                inode=_ino(identity),
                old_read_to=old_pos,
                old_rest=d.old_rest if d is not None else "read",
            )
        else:
            self.reset(start, line_no)
            how = f"from line {line_no}" if start else "from the start"
            note = f" (the newest of {self.matches} matching files)" if self.matches > 1 else ""
            src.identity, src.current = identity, name
            yield self.ev(
                EventKind.OPENED,
                f"reading {self.display(name)} {how}{note}",
                name,
                inode=_ino(identity),
                size=size,
                offset=start,
                start=str(src.start) if not src._opened_once else "start",
            )
        src.identity, src.current = identity, name
        src._opened_once = True

    async def _open_failed(self, kind: str, detail: list[str], name: str) -> AsyncIterator[Batch]:
        src = self.src
        self.failed = True
        path = self.display(name)
        fatal = not src.follow
        if kind == "enoent":
            if src.follow:
                self.retry_at = None if src.rp.glob else self.loop.time() + src.settings.status_interval
                if not self.waiting_said:
                    self.waiting_said = True
                    msg = (
                        f"{path} was removed or renamed; waiting for it to come back"
                        if src.identity
                        else f"no such file: {path}; waiting for it to appear"
                    )
                    yield self.ev(EventKind.WAITING, msg, name)
                if src.rp.glob:
                    self.pending_name = None
                return
            message = f"no such file: {path}"
        elif kind == "eacces":
            message = f"permission denied: cannot read {path}"
            fatal = fatal or not src._opened_once
        elif kind == "isdir":
            message, fatal = f"{path} is a directory, not a log file", True
        elif kind == "notregular":
            message, fatal = f"{path} is not a regular file", True
        elif kind == "notfound":
            tool = detail[0] if detail else "?"
            message, fatal = (
                (
                    f"`{tool}` was not found on {src.host} (not in the remote PATH); specwatch needs "
                    "the POSIX shell and GNU coreutils (tail, stat, head, wc) there"
                ),
                True,
            )
        else:
            message = f"cannot open {path} on {src.host} ({kind})"
        if fatal:
            src.error = message
            self.done = True
            yield self.ev(EventKind.ERROR, message, name, fatal=True)
            return
        if self.error_said != message:
            self.error_said = message
            yield self.ev(EventKind.ERROR, message + " (retrying)", name, fatal=False)
        self.retry_at = self.loop.time() + src.settings.status_interval

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
                    inode=_ino(src.identity),
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
            if self.demux is not None and self.demux.pending:  # bytes held as a possible marker are data
                b = self.feed(self.demux.pending, self.display(src.current))
                self.demux.pending = b""
                if b is not None:
                    yield b
            await self._drained(True)
            return
        if not src.follow:
            if self.demux is not None and self.demux.pending:  # bytes held as a possible marker are data
                b = self.feed(self.demux.pending, self.display(src.current))
                self.demux.pending = b""
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

    async def _drained(self, whole: bool) -> None:
        """The reader of the rest of a rotated-away file ended (``whole``: at its end; else the
        file changed again before it could be read): now the file at the name."""
        d = self.draining
        assert d is not None and d.drain is not None
        self.draining = None
        pos = self.src.splitter.pos
        old_name, start, _ = d.drain
        if whole:  # to where it really ended (it may have grown since the probe)
            note = drained_note(d.action == "restart", old_name, start, pos)
            d = Decision(d.action, d.why, old_note=note, old_rest=d.old_rest)
        else:
            what = "its copy" if d.action == "restart" else "the old file, now"
            note = (
                f"{what} {old_name} changed again before the rest of it could be read: "
                f"whatever was written to it after byte {pos} was not read"
            )
            d = Decision(d.action, d.why, old_note=note, old_rest="lost")
        await self.open(self.pending_name or self.src.rp.base, drained=True, after=d)

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
