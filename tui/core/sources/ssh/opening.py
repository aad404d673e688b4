"""Opening a file on an SSH source's connection: the reader started in the right mode, its
header checked, and the resume decision made.

Identity checks: the header names the file the remote side opened; the first status record
names the file ``tail`` really has open (``/proc/PID/fd``). Data is held back until they agree,
so a rotation between the two cannot mix two files. A rotation or a newer glob match is
carried out only once the old file (which ``tail`` keeps open) has been quiet -- its size in the
status records unchanged for the settle time -- and everything it held has arrived. A
truncation ``tail`` reports while following is checked like a reconnect (``probe``): the rest of
the old content is read from a copy that holds the same bytes first.

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
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

import asyncssh

from tui.core.sources.aio import wait_for
from tui.core.sources.base import Batch, EventKind, LineBatch, SourceEvent
from tui.core.sources.identity import Decision, FileLook, Look, decide, drained_note, unread_note
from tui.core.sources.lines import make_batch
from tui.core.sources.ssh import catchup
from tui.core.sources.ssh.channels import raise_if_lost, refused
from tui.core.sources.ssh.remote_side import (
    Entry,
    ProbeReport,
    ReaderDemux,
    parse_probe,
)
from tui.core.sources.ssh.scripts import (
    copies_command,
    expected_sums,
    probe_command,
)
from tui.core.sources.ssh.shared import ChannelRefused

if TYPE_CHECKING:
    from tui.core.sources.ssh.channels import Channels
    from tui.core.sources.ssh.state import ConnState, FileState, SessionOwner


def inode_of(identity: str | None) -> int | None:
    try:
        return int(identity.split(":")[1]) if identity else None
    except (IndexError, ValueError):
        return None


class Opener:
    """How a file is opened on one connection (see the module notes): the reader started in the
    right mode, its header checked against the file state, the resume decision made. It shares
    the connection's reading state ``cs`` with the follow loop (:class:`.tail.Session`)."""

    def __init__(
        self, src: SessionOwner, file: FileState, cs: ConnState, channels: Channels, conn, q: asyncio.Queue
    ) -> None:
        self.src = src
        self.file = file
        self.cs = cs
        self.channels = channels
        self.conn = conn
        self.q = q
        self.loop = asyncio.get_running_loop()
        self.probed_old: Entry | None = None  # where the last probe found the old file

    def reset(self, start: int, line_no: int) -> None:
        self.file.splitter.reset(start, line_no)
        self.file.fingerprint.reset(start)

    def ev(self, kind: EventKind, message: str, name: str | None = None, **data) -> SourceEvent:
        return self.src.event(kind, message, name, **data)

    def display(self, name: str | None) -> str:
        return self.src.display(name)

    def prepare(self) -> None:
        """A new reader's state: no header yet, nothing held, a new demux."""
        cs = self.cs
        cs.header = False
        cs.held = []
        cs.open_size = None
        cs.demux = ReaderDemux(self.src.tag, self.src.nonce)
        cs.failed = False
        cs.verifying = False

    async def start_reader(self, cmd: str) -> None:
        try:
            self.cs.reader = await self.channels.start(self.conn, "reader", cmd, self.q)
            self.cs.reader_since = self.loop.time()
        except ChannelRefused as exc:
            self.refused_for_now(exc)

    def feed_plain(self, data: bytes) -> LineBatch | None:
        """Decompressed (or plain) bytes of the file being read, into its lines."""
        self.file.fingerprint.feed(data)
        return make_batch(self.src.name, self.file.splitter.feed(data), self.display(self.file.current))

    async def open(
        self,
        name: str,
        *,
        drained: bool = False,
        after: Decision | None = None,
        probe: bool = False,
        decided: Decision | None = None,
    ) -> None:
        """Starts the reader on ``name``. A file read before and not ``drained`` through a live
        ``tail`` is checked by the reader itself (``verify``: identity, size, checksums); when
        that fails (``probe``) a probe finds out what happened (see the module notes).
        ``after``: the decision whose old file was just read to its end (for the event)."""
        src = self.src
        mode = "first" if not self.file.opened_once and self.file.identity is None else "resume"
        self.cs.pending_name = name
        self.cs.header = False
        self.cs.verified = not src.follow
        self.cs.held = []
        self.cs.open_size = None
        self.cs.demux = ReaderDemux(src.tag, src.nonce)
        self.cs.decision, self.cs.draining = after, None
        self.cs.failed = False  # the header said the file could not be opened
        self.cs.verifying = False
        cmd = None
        check = mode == "resume" and src.follow and not drained and self.file.identity is not None
        if check and not probe:
            fp = self.file.fingerprint
            if (
                fp.pos != self.file.splitter.pos
            ):  # not kept in step (cannot happen): trust identity and size only
                fp.reset(self.file.splitter.pos)
            self.cs.verifying = True
            cmd = src.reader_for(name, "verify", sums=expected_sums(fp.chunks()), ranges=fp.ranges())
        elif check and self.file.identity is not None:
            self.cs.probed = (self.file.identity, self.file.splitter.pos)
            try:
                d = self.cs.decision = decided or await self.probe(name, self.file.identity)
            except ChannelRefused as exc:
                self.refused_for_now(exc)
                return
            if d.drain is not None:  # the rest of the old file (or its copy) first, under its new name
                self.cs.draining, self.cs.verified = d, True
                self.cs.drain_from_line = self.file.splitter.line_no
                cmd = self._reader(d.drain[0], d.drain[1], False, d.drain_identity)
            elif d.action == "restart":
                cmd = self._reader(name, 0, True)
        elif after is not None and after.action == "restart":
            cmd = self._reader(name, 0, True)
        await self.start_reader(cmd or src.reader_for(name, mode))

    def refused_for_now(self, exc: ChannelRefused) -> None:
        """sshd refused one more session: said by the loop, opened again after a delay."""
        self.cs.refused = str(exc)
        self.cs.header = True
        self.cs.reader = None
        self.cs.retry_at = self.loop.time() + self.src.settings.delay(2)

    def _reader(self, name: str, offset: int, follow: bool, expect: str | None = None) -> str:
        return self.src.reader_for(name, "resume", offset=offset, expect=expect, follow=follow)

    async def probe(self, name: str, identity: str) -> Decision:
        """What became of the file read to ``splitter.pos`` (a short command on the host; a
        second one looks for a copy when the file was truncated)."""
        src = self.src
        fp, pos = self.file.fingerprint, self.file.splitter.pos
        if fp.pos != pos:  # not kept in step (cannot happen): trust identity and size only
            fp.reset(pos)
        probe = await self._run(probe_command(src.tag, src.rp, name, identity, fp.ranges()))

        def look(e: Entry | None, which: str) -> FileLook | None:
            if e is None or not e.regular:
                return None
            return FileLook(e.identity, e.size, fp.same_sums(probe.sums.get(which, {})), e.name)

        found = Look(look(probe.name, "name"), look(probe.old, "old"))
        self.probed_old = probe.old
        d = decide(identity, pos, found)
        if d.action != "restart" or pos == 0:
            return d
        probe = await self._run(copies_command(src.tag, src.rp, name, pos, fp.ranges()))
        copies = tuple(look(e, f"k{i}") for i, e in enumerate(probe.copies))
        return decide(identity, pos, Look(found.at_name, None, tuple(c for c in copies if c is not None)))

    async def _run(self, cmd: str) -> ProbeReport:
        return parse_probe(await self.run_raw(cmd), self.src.tag)

    async def run_raw(self, cmd: str) -> bytes:
        """A short command's output (a listing, a probe); raises ChannelRefused or Lost."""
        src = self.src
        timeout = (src.settings.connect_timeout or 10.0) * 3
        try:
            result = await wait_for(
                self.conn.run(cmd, encoding=None, stdin=asyncssh.DEVNULL, check=False), timeout
            )
        except asyncssh.ChannelOpenError as exc:
            raise_if_lost(self.conn, None)  # raises (lost) when the connection is closed
            raise refused(src.host, exc) from None
        except TimeoutError:  # a ConnectionError is "lost" for raise_if_lost
            raise_if_lost(self.conn, ConnectionError(f"no answer to the file check within {timeout:g} s"))
            raise
        except (asyncssh.Error, OSError) as exc:
            raise_if_lost(self.conn, exc)
            raise_if_lost(self.conn, ConnectionError(str(exc)))
            raise
        return result.stdout if isinstance(result.stdout, bytes) else b""

    async def truncated(
        self, message: str, old_rest: str | None = None, rest: dict | None = None
    ) -> AsyncIterator[Batch]:
        src = self.src
        b = make_batch(src.name, self.file.splitter.flush(), self.display(self.file.current))
        if b is not None:
            yield b
        old = self.file.splitter.pos
        self.cs.seen_size = None
        if rest:  # the rest of the old content was read from a copy: old_size is what was read before it
            old = rest["rest_from"]
        self.reset(0, 1)
        extra = {"old_rest": old_rest} if old_rest else {}
        yield self.ev(
            EventKind.TRUNCATED,
            message,
            old_size=old,
            inode=inode_of(self.file.identity),
            **extra,
            **(rest or {}),
        )

    async def on_header(self, fields: list[str]) -> AsyncIterator[Batch]:
        src = self.src
        name = self.cs.pending_name or src.rp.base
        self.cs.header = True
        ok = bool(fields) and fields[0] == "ok" and len(fields) >= 5
        moved = fields[:2] == ["err", "moved"]  # not the same file read to the same point
        gone = (
            self.cs.verifying
            and fields[:2] == ["err", "enoent"]
            and self.cs.probed != (self.file.identity, self.file.splitter.pos)
        )
        if self.cs.step is not None:  # a file of a catch-up: still the one listed, from the byte planned
            async for b in catchup.step_header(self, fields):
                yield b
            return
        cu = self.file.catchup
        if cu is not None and (moved or gone) and cu.rounds < catchup.MAX_ROUNDS:
            async for b in catchup.begin(self):  # the file listed at the name was rotated meanwhile
                yield b
            return
        if moved or gone:  # probe (once for a missing name: the old file may be under another name)
            async for b in catchup.reprobe(self, name):
                yield b
            return
        if self.cs.draining is not None:  # the old file (or copy) must still be the one probed
            if (
                not ok
                or fields[1] != self.cs.draining.drain_identity
                or int(fields[3]) != self.file.splitter.pos
            ):
                await self.drained(False)
            return
        if not ok:
            async for b in self.open_failed(fields[1] if len(fields) > 1 else "unknown", fields[2:], name):
                yield b
            return
        identity, size, start = fields[1], int(fields[2]), int(fields[3])
        line_no = int(fields[4]) if fields[4].isdigit() else self.file.splitter.line_no
        prev, prev_name = self.file.identity, self.file.current
        mtime = float(fields[5]) if len(fields) > 5 and fields[5].isdigit() else 0.0
        if cu is not None and not src.rp.glob:  # the catch-up ends: the file at the name is open
            self.cs.waiting_said = False
            self.cs.error_said = None
            self.cs.retry_at = None
            self.cs.last_data = self.loop.time()
            async for b in catchup.finish(self, identity, size, start, line_no):
                yield b
            self.file.mtime = mtime
            self.file.opened_once = True
            return
        if prev is not None and identity != prev and not src.rp.glob and src.follow:
            async for b in catchup.begin(self):  # another file at the name: the set first
                yield b
            return
        self.file.mtime = mtime
        self.cs.waiting_said = False
        self.cs.error_said = None
        if self.cs.switch is not None and self.cs.switch[0] == name:  # (a newer match listed meanwhile stays)
            self.cs.switch = None
        self.cs.last_data = self.loop.time()
        self.cs.retry_at = None
        if prev is not None and identity == prev and start == self.file.splitter.pos:
            pass  # resumed exactly where we were
        elif prev is not None and identity == prev:
            self.file.current = name
            d = self.cs.decision
            if d is not None and d.action == "restart":
                why = d.why + (f"; {d.old_note}" if d.old_note else "")
            else:
                why = f"shrank to {size} bytes (it was read to byte {self.file.splitter.pos})"
            rest = d.old_rest if d is not None and d.action == "restart" and d.old_rest else None
            async for b in self.truncated(
                f"{self.display(name)} {why}; reading it again from the start",
                rest,
                rest_data(d, self.display),
            ):
                yield b
        elif prev is not None:
            last = make_batch(src.name, self.file.splitter.flush(), self.display(prev_name))
            if last is not None:
                yield last
            old_pos = self.file.splitter.pos
            self.reset(start, line_no)
            self.file.identity, self.file.current = identity, name
            d = self.cs.decision if self.cs.decision is not None and self.cs.decision.old_note else None
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
                old_inode=inode_of(prev),
                inode=inode_of(identity),
                old_read_to=old_pos,
                old_rest=d.old_rest if d is not None else "read",
                **rest_data(d, self.display),
            )
        else:
            self.reset(start, line_no)
            how = f"from line {line_no}" if start else "from the start"
            note = f" (the newest of {self.cs.matches} matching files)" if self.cs.matches > 1 else ""
            self.file.identity, self.file.current = identity, name
            yield self.ev(
                EventKind.OPENED,
                f"reading {self.display(name)} {how}{note}",
                name,
                inode=inode_of(identity),
                size=size,
                offset=start,
                start=str(src.start) if not self.file.opened_once else "start",
            )
        self.file.identity, self.file.current = identity, name
        self.file.opened_once = True

    async def open_failed(self, kind: str, detail: list[str], name: str) -> AsyncIterator[Batch]:
        src = self.src
        self.cs.failed = True
        path = self.display(name)
        fatal = not src.follow
        if kind == "enoent":
            if src.follow:
                self.cs.retry_at = None if src.rp.glob else self.loop.time() + src.settings.status_interval
                if not self.cs.waiting_said:
                    self.cs.waiting_said = True
                    msg = (
                        f"{path} was removed or renamed; waiting for it to come back"
                        if self.file.identity
                        else f"no such file: {path}; waiting for it to appear"
                    )
                    yield self.ev(EventKind.WAITING, msg, name)
                if src.rp.glob:
                    self.cs.pending_name = None
                return
            message = f"no such file: {path}"
        elif kind == "eacces":
            message = f"permission denied: cannot read {path}"
            fatal = fatal or not self.file.opened_once
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
            self.file.error = message
            self.cs.done = True
            yield self.ev(EventKind.ERROR, message, name, fatal=True)
            return
        if self.cs.error_said != message:
            self.cs.error_said = message
            yield self.ev(EventKind.ERROR, message + " (retrying)", name, fatal=False)
        self.cs.retry_at = self.loop.time() + src.settings.status_interval

    async def drained(self, whole: bool) -> None:
        """The reader of the rest of a rotated-away file ended (``whole``: at its end; else the
        file changed again before it could be read): now the file at the name."""
        d = self.cs.draining
        assert d is not None and d.drain is not None
        self.cs.draining = None
        pos = self.file.splitter.pos
        old_name, start, _ = d.drain
        if whole:  # to where it really ended (it may have grown since the probe)
            sp = self.file.splitter
            lines = sp.line_no - self.cs.drain_from_line + (1 if sp.pending else 0)  # (+ the last, unended)
            copy = d.action == "restart"
            note = drained_note(copy, self.display(old_name), start, pos, lines)
            rest = d.old_rest
            seen, self.cs.seen_size = self.cs.seen_size, None
            if copy and seen is not None and seen > pos:  # the file had more than its copy holds
                note, rest = f"{note}; {unread_note(pos, seen)}", "lost"
            d = Decision(d.action, d.why, (old_name, start, pos), d.drain_identity, note, rest, lines)
        else:
            what = "its copy" if d.action == "restart" else "the old file, now"
            note = (
                f"{what} {old_name} changed again before the rest of it could be read: "
                f"whatever was written to it after byte {pos} was not read"
            )
            d = Decision(d.action, d.why, old_note=note, old_rest="lost")
        await self.open(self.cs.pending_name or self.src.rp.base, drained=True, after=d)


def rest_data(d: Decision | None, display: Callable[[str], str]) -> dict:
    """The event's data on the rest of an old file (or copy) that was read: its name, bytes and
    lines (none when nothing was read that way)."""
    if d is None or d.drain is None or d.rest_lines is None:
        return {}
    name, start, end = d.drain
    return {"rest_path": display(name), "rest_from": start, "rest_to": end, "rest_lines": d.rest_lines}
