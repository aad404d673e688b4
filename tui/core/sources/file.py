"""A local file followed by name, with ``tail -F`` semantics.

* Appends arrive promptly: inotify wake-ups through :mod:`.watch`, polling as the fallback (and
  as a safety net, so a lost notification only costs one poll interval).
* Truncation (the file shrank, or the bytes before our position changed: truncated and refilled
  between two looks, judged by :func:`.identity.decide` on the first and last 4 KiB read, as
  for SSH sources): the rest of the old content is read from a copy holding the same bytes
  (copytruncate, :mod:`.copies`), then ``truncated`` says what was read, and the file is read
  again from its new start.
* Rotation (the name now points at another file): the old file, still open, is read until it
  has been quiet (no new bytes) for ``settle`` seconds, however long its writer goes on; then
  ``rotated`` (saying it was read to its end) and the new file is read from its start.
* The name disappears (for longer than a rename-then-create takes): ``waiting``; the old file,
  still open, keeps being read. When the name comes back as a new file: ``rotated``.
* Permission denied: ``error`` (fatal on the first open, else retried).

The follower reads whole chunks and emits one :class:`LineBatch` per chunk.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator

from tui.core.sources.base import (
    Batch,
    EventKind,
    GeneratorSource,
    LineBatch,
    SourceEvent,
)
from tui.core.sources.chain import LocalCatchUp, gen_of
from tui.core.sources.copies import after_truncation
from tui.core.sources.generations import Gen
from tui.core.sources.identity import WINDOW
from tui.core.sources.lines import (
    START,
    StartAt,
    count_newlines,
    find_start,
)
from tui.core.sources.openfile import OpenFile, describe_oserror
from tui.core.sources.wakeups import Waker

_COUNT_INLINE = 8 << 20  # count newlines in the loop below this size, in a thread above


class Follower(GeneratorSource):
    """The loop shared by :class:`FileSource` and the glob source: read, look, wait.

    Subclasses say what should be read now (:meth:`_target`); this class reads it, notices
    truncation, switches files (finishing the old one first) and emits the events.
    """

    SWITCH_KIND = EventKind.ROTATED
    CHAIN = False  # a rotation reads the rotated set's generations first (a followed name)

    def __init__(
        self,
        name: str,
        *,
        follow: bool = True,
        start: StartAt = START,
        poll_interval: float = 0.1,
        safety_interval: float = 0.5,
        settle: float = 0.25,
        idle_after: float | None = 30.0,
        use_inotify: bool = True,
    ) -> None:
        self.name = name
        self.follow = follow
        self.start = start
        self.poll_interval = poll_interval
        self.safety_interval = safety_interval
        self.settle = settle
        self.idle_after = idle_after
        self.waker = Waker(use_inotify=use_inotify, interested=self._interested)
        self.current: OpenFile | None = None
        self._pending: OpenFile | None = None
        self.error: str | None = None  # the fatal error that ended the source, if any
        self._gen: AsyncIterator[Batch] | None = None
        self._waiting_said = False
        self._error_said: str | None = None
        self._last_data = time.monotonic()
        self._idle_said = False
        self._gone_since: float | None = None
        self._gone_grace = max(settle, poll_interval, 0.05)
        self._current_names: tuple[OpenFile, set[str]] | None = None
        self._drain_error: str | None = None  # the last read of the file failed (why)
        self.chain: list[Gen] = []  # the generations read (see generations.py)
        self._heads: dict[tuple[str, int], bytes] = {}  # compressed files' first bytes

    # -- what subclasses provide -------------------------------------------------------------
    def _target(self, changed: set[str] | None) -> tuple[str, os.stat_result] | None:
        raise NotImplementedError

    def _waiting_message(self) -> str:
        raise NotImplementedError

    def _missing_message(self) -> str:
        raise NotImplementedError

    def _switch_message(self, old: OpenFile, new_path: str) -> str:
        raise NotImplementedError

    def _open_note(self) -> str:
        return ""

    def _switch_kind(self, old: OpenFile, new_path: str) -> EventKind:
        return self.SWITCH_KIND

    def _directories(self) -> set[str]:
        raise NotImplementedError

    def _interested(self, path: str) -> bool:
        """Whether a change to ``path`` (in a watched directory) may concern this follower."""
        return True

    def _is_current(self, path: str) -> bool:
        f = self.current
        if f is None:
            return False
        names = self._current_names
        if names is None or names[0] is not f:  # computed once per file (realpath costs syscalls)
            names = self._current_names = (f, {f.path, os.path.abspath(f.path), os.path.realpath(f.path)})
        return path in names[1]

    # -- the source interface --------------------------------------------------------------------
    async def _after_close(self) -> None:
        self._cleanup()

    def _cleanup(self) -> None:
        self.waker.unsubscribe_all()
        for f in (self.current, self._pending):
            if f is not None:
                f.close()
        self.current = self._pending = None

    def _event(self, kind: EventKind, message: str = "", path: str | None = None, **data) -> SourceEvent:
        return SourceEvent(self.name, kind, message, path, data=data)

    def _subscribe(self) -> None:
        dirs = self._directories()
        for d in dirs:
            self.waker.subscribe(d)
        self.waker.keep_only({os.path.abspath(d) for d in dirs})

    # -- the loop ----------------------------------------------------------------------------
    async def _run(self) -> AsyncIterator[Batch]:
        try:
            self._subscribe()
            first = True
            changed: set[str] | None = None
            while True:
                async for b in self._look(first, changed):
                    yield b
                if self.error is not None:
                    return
                first = False
                f = self.current
                if f is not None:
                    async for b in self._drain(f):
                        yield b
                if not self.follow:
                    if f is not None:
                        last = f.flush(self.name)
                        if last is not None:
                            yield last
                        yield self._event(EventKind.EOF, f"end of {f.path}", f.path, offset=f.pos)
                    return
                changed = await self._wait()
                if changed is None:
                    idle = self.idle_after or 0.0
                    yield self._event(
                        EventKind.IDLE, f"no new line for {idle:g} s", self._path(), seconds=idle
                    )
        finally:
            self._cleanup()

    def _path(self) -> str | None:
        return self.current.path if self.current is not None else None

    async def _drain(self, f: OpenFile) -> AsyncIterator[Batch]:
        while True:
            try:
                b = f.read(self.name)
            except OSError as exc:  # EIO, ESTALE, ...: said once, retried on the next look
                self._drain_error = describe_oserror(exc, f.path)
                async for e in self._say_error(describe_oserror(exc, f.path), False):
                    yield e
                return
            if b is False:
                return
            self._drain_error = None
            self._last_data = time.monotonic()
            self._idle_said = False
            self._error_said = None
            if isinstance(b, LineBatch):
                yield b

    async def _wait(self) -> set[str] | None:
        """Wait for a change (or a poll); None means "say idle now"."""
        interval = self.safety_interval if self.waker.watching else self.poll_interval
        if self._gone_since is not None and not self._waiting_said:
            interval = min(interval, self._gone_grace / 2)
        if self.idle_after and not self._idle_said:
            left = self._last_data + self.idle_after - time.monotonic()
            if left <= 0:
                self._idle_said = True
                return None
            interval = min(interval, left)
        changed = await self.waker.wait(interval)
        if not changed:
            self._subscribe()  # a poll: re-establish watches lost to a removed/replaced directory
        return changed

    async def _look(self, first: bool, changed: set[str] | None) -> AsyncIterator[Batch]:
        """Truncation, then what the name/pattern points at now."""
        f = self.current
        if f is not None:
            try:
                why = f.truncation()
            except OSError:
                why = None
            if why is not None:
                async for b in after_truncation(f, why, self.name, self._event):
                    yield b
        try:
            target = self._target(changed)
        except OSError as exc:
            target = None
            if isinstance(exc, PermissionError):
                async for e in self._say_error(
                    describe_oserror(exc, getattr(exc, "filename", "") or self.name), first
                ):
                    yield e
                return
        if target is None:
            if f is not None and self.follow and not self._waiting_said:
                # a rotation (rename, then create) is not atomic: say "waiting" only when the
                # name stays away for longer than that takes
                now = time.monotonic()
                if self._gone_since is None:
                    self._gone_since = now
                if now - self._gone_since < self._gone_grace:
                    return
            if not self._waiting_said and (f is None or self.follow):
                self._waiting_said = True
                if not self.follow:
                    self.error = self._missing_message()
                    yield self._event(EventKind.ERROR, self.error, None, fatal=True)
                    return
                yield self._event(EventKind.WAITING, self._waiting_message(), self._path())
            return
        path, st = target
        self._gone_since = None
        if f is not None and (st.st_dev, st.st_ino) == f.identity:
            if self._waiting_said:  # the name is back, on the same file
                self._waiting_said = False
                yield self._event(
                    EventKind.OPENED, f"{path} is back", path, inode=st.st_ino, size=st.st_size, offset=f.pos
                )
            return
        try:
            new = OpenFile.open(path)
        except FileNotFoundError:
            return  # gone again in between: next look
        except OSError as exc:
            async for e in self._say_error(describe_oserror(exc, path), first):
                yield e
            return
        self._pending = new  # closed by _cleanup if we are stopped while finishing the old one
        if f is not None:
            finished: list[str] = []
            async for b in self._finish(f, path, finished):
                yield b
        self._error_said = None
        cu: LocalCatchUp | None = None
        if f is not None:
            last = f.flush(self.name)
            if last is not None:
                yield last
            if self.CHAIN and self._switch_kind(f, path) == EventKind.ROTATED:
                # every generation older than the new file not read to its end, in order
                cu = LocalCatchUp(path, self.chain, self._heads)
                old = gen_of(f)
                old.closed = finished[0] == "read"
                ident = f"{new.identity[0]}:{new.identity[1]}"
                async for b in cu.run(old, ident, os.pread(new.fd, WINDOW, 0), self.name):
                    yield b
            f.close()
        self.current, self._pending = new, None
        self._subscribe()
        st = os.fstat(new.fd)
        if first:
            offset = find_start(new.fd, st.st_size, self.start)
            if offset <= _COUNT_INLINE:
                nl = count_newlines(new.fd, offset)
            else:
                nl = await asyncio.to_thread(count_newlines, new.fd, offset)
            new.seek(offset, nl + 1)
        if f is None:
            how = f"from line {new.splitter.line_no}" if first and new.pos else "from the start"
            yield self._event(
                EventKind.OPENED,
                f"reading {path} {how}{self._open_note()}",
                path,
                inode=st.st_ino,
                size=st.st_size,
                mtime=st.st_mtime,
                offset=new.pos,
                start=str(self.start) if first else "start",
            )
        else:
            rest, how = finished
            more = cu.phrase() if cu is not None else ""
            extra = {} if cu is None else {"generations": cu.read, "lost": cu.lost}
            lost_gens = cu.lost_generations if cu is not None else 0
            yield self._event(
                self._switch_kind(f, path),
                f"{self._switch_message(f, path)}; {how}{'; ' + more if more else ''}"
                + (f" ({lost_gens} generation{'s' if lost_gens != 1 else ''} lost)" if lost_gens else ""),
                path,
                old_path=f.path,
                old_inode=f.identity[1],
                inode=st.st_ino,
                old_read_to=f.pos,
                old_rest=rest,
                **extra,
                **({"lost_generations": lost_gens} if cu is not None else {}),
            )
        self._waiting_said = False

    async def _finish(self, f: OpenFile, new_path: str, out: list[str]) -> AsyncIterator[Batch]:
        """Reads the old file of a rotation (or switch) until it has been quiet -- no new bytes
        for ``settle`` seconds -- however long it is still written (it stays open here); ``out``
        gets its ``old_rest`` and the phrase for the event."""
        noticed = f.pos
        self._drain_error = None
        async for b in self._drain(f):
            yield b
        while self.settle > 0 and self._drain_error is None:
            before = f.pos
            await asyncio.sleep(self.settle)
            async for b in self._drain(f):
                yield b
            if f.pos == before:
                break
        which = "the old one" if self._switch_kind(f, new_path) == EventKind.ROTATED else f.path
        if self._drain_error is not None:
            out += [
                "lost",
                f"reading {which} failed ({self._drain_error}): what followed byte {f.pos} was not read",
            ]
            return
        late = f", {f.pos - noticed} bytes of it after the change was noticed" if f.pos > noticed else ""
        quiet = f", then no new bytes for {self.settle:g} s" if self.settle > 0 else ""
        out += ["read", f"{which} was read to its end (to byte {f.pos}{late}{quiet})"]

    async def _say_error(self, message: str, first: bool) -> AsyncIterator[Batch]:
        if first or not self.follow:
            self.error = message
            yield self._event(EventKind.ERROR, message, None, fatal=True)
        elif self._error_said != message:
            self._error_said = message
            yield self._event(EventKind.ERROR, message + " (retrying)", None, fatal=False)


class FileSource(Follower):
    """A local file followed by name (``tail -F``); with ``follow=False``, read once to its end."""

    SWITCH_KIND = EventKind.ROTATED
    CHAIN = True

    def __init__(self, path: str, name: str | None = None, **options) -> None:
        self.path = os.path.expanduser(path)
        self.where = os.path.abspath(self.path)
        super().__init__(name or path, **options)

    def _target(self, changed: set[str] | None) -> tuple[str, os.stat_result] | None:
        try:
            return self.path, os.stat(self.path)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def _interested(self, path: str) -> bool:
        return path == self.where or self._is_current(path)  # inotify paths are absolute

    def _directories(self) -> set[str]:
        dirs = {os.path.dirname(self.where)}
        if self.current is not None:  # a symlink: appends happen where the file really is
            dirs.add(os.path.dirname(os.path.realpath(self.current.path)))
        return dirs

    def _waiting_message(self) -> str:
        if self.current is not None:
            return f"{self.path} was removed or renamed; waiting for it to come back"
        if not os.path.isdir(os.path.dirname(self.where)):
            return f"no such file: {self.path} (its directory does not exist); waiting for it"
        return f"no such file: {self.path}; waiting for it to appear"

    def _missing_message(self) -> str:
        return f"no such file: {self.path}"

    def _switch_message(self, old: OpenFile, new_path: str) -> str:
        if self._waiting_said:
            return f"{new_path} is back as a new file"
        return f"{new_path} now points at a new file (rotated)"
