"""Wake-ups for file followers: Linux inotify on the event loop where available, else polling.

One inotify descriptor per event loop, read with ``loop.add_reader`` (no thread: a write to a
followed file costs one ``read`` of a few bytes on the loop, nothing in a Python-visible thread).
Every follower of a file in a watched directory shares that directory's watch, and a follower
only wakes for the paths it follows (32 logs in one directory do not all wake for each write).
Wake-ups are coalesced: after one, the next comes no sooner than ``min_gap`` seconds later, so a
burst of writes is read as one batch.

Followers wait on an ``asyncio.Event`` with a timeout, so polling is always the fallback: a lost
or impossible watch (no inotify, network file system, directory missing or replaced) only makes
wake-ups slower.

A wake grid (:func:`set_wake_grid`) puts every follower wake-up on the points ``k·period`` of the
loop's clock: the inotify descriptor is set aside after its first event and read at the
next point (many writes, one wake-up), and polls end on a point too. The app renders on the same
grid, just after, so reading, folding and drawing happen in one wake-up per period whatever the
write rate (each wake-up of a process costs far more than its few reads).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import errno
import math
import os
import struct
import sys
from collections.abc import Callable

from tui.core.sources.aio import wait_for

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
)
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of NUL-padded name)
MIN_GAP = 0.05  # seconds between two wake-ups of one follower (bursts become one batch)

_grid: float | None = None  # the wake grid's period, in seconds of the loop's clock


def set_wake_grid(period: float | None) -> None:
    """Put follower wake-ups on the points ``k·period`` of the event loop's clock (None: as soon as
    something changes, ``min_gap`` apart)."""
    global _grid
    if period is not None and not (period > 0 and math.isfinite(period)):
        raise ValueError(f"a wake grid needs a positive period, not {period!r}")
    _grid = period


def next_grid_point(t: float) -> float:
    """The first grid point at or after ``t`` (``t`` itself without a grid)."""
    if _grid is None:
        return t
    return math.ceil(t / _grid - 1e-9) * _grid


def _load_libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        return libc
    except (OSError, AttributeError):
        return None


_LIBC = _load_libc()


def inotify_available() -> bool:
    return _LIBC is not None


class _Inotify:
    """One inotify descriptor on one event loop: directory watches and their subscribers."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        assert _LIBC is not None
        fd = _LIBC.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        self.fd = fd
        self.loop = loop
        self.dirs: dict[str, int] = {}  # directory -> wd
        self.paths: dict[int, set[str]] = {}  # wd -> its directory's names (a symlinked one has two)
        self.identity: dict[str, tuple[int, int]] = {}
        self.subscribers: dict[str, dict[int, Callable[[set[str]], None]]] = {}
        loop.add_reader(fd, self._readable)
        self.reads = 0  # how many times the descriptor was read (tests, benchmarks)
        self._held: asyncio.TimerHandle | None = None  # set aside until the next grid point

    def watch(self, directory: str) -> bool:
        st = os.stat(directory)
        wd = _LIBC.inotify_add_watch(self.fd, os.fsencode(directory), MASK)
        if wd < 0:
            return False
        old = self.dirs.get(directory)
        if old is not None and old != wd:
            self._forget(old, directory)
        self.dirs[directory] = wd
        self.paths.setdefault(wd, set()).add(directory)
        self.identity[directory] = (st.st_dev, st.st_ino)
        return True

    def alive(self, directory: str) -> bool:
        return directory in self.dirs

    def unwatch(self, directory: str) -> None:
        wd = self.dirs.pop(directory, None)
        self.identity.pop(directory, None)
        if wd is not None and not self._forget(wd, directory) and self.fd >= 0:
            _LIBC.inotify_rm_watch(self.fd, wd)

    def _forget(self, wd: int, directory: str) -> bool:
        """Drop one name of a watch; True while the watch has other names."""
        names = self.paths.get(wd)
        if names is None:
            return False
        names.discard(directory)
        if not names:
            del self.paths[wd]
        return bool(names)

    def _readable(self) -> None:
        if _grid is not None:  # read at the next grid point: the writes until then are one wake-up
            if self._held is None and self.fd >= 0:
                self.loop.remove_reader(self.fd)
                self._held = self.loop.call_at(next_grid_point(self.loop.time()), self._release)
            return
        self._drain()

    def _release(self) -> None:
        self._held = None
        if self.fd < 0:
            return
        self.loop.add_reader(self.fd, self._readable)
        self._drain()

    def _drain(self) -> None:
        changed: dict[str, set[str]] = {}
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                self.close()
                return
            self.reads += 1
            pos = 0
            while pos + _EVENT.size <= len(data):
                wd, mask, _cookie, size = _EVENT.unpack_from(data, pos)
                name = data[pos + _EVENT.size : pos + _EVENT.size + size].rstrip(b"\0")
                pos += _EVENT.size + size
                if mask & IN_Q_OVERFLOW:  # events were lost: every directory may have changed
                    for d in self.dirs:
                        changed.setdefault(d, set()).add(d)
                    continue
                for directory in self.paths.get(wd, ()):
                    path = os.path.join(directory, os.fsdecode(name)) if name else directory
                    changed.setdefault(directory, set()).add(path)
                if mask & IN_IGNORED:  # the directory went away: its followers poll until it is back
                    for directory in self.paths.pop(wd, ()):
                        if self.dirs.get(directory) == wd:
                            del self.dirs[directory]
            if len(data) < 65536:
                break
        for directory, paths in changed.items():
            for callback in list(self.subscribers.get(directory, {}).values()):
                callback(paths)

    def close(self) -> None:
        if self.fd < 0:
            return
        if self._held is not None:
            self._held.cancel()
            self._held = None
        try:
            self.loop.remove_reader(self.fd)
        except Exception:  # the loop is closed already
            pass
        os.close(self.fd)
        self.fd = -1
        self.dirs.clear()
        self.paths.clear()


_INOTIFY: dict[int, _Inotify] = {}  # id(loop) -> its inotify


def _inotify_for(loop: asyncio.AbstractEventLoop) -> _Inotify:
    ino = _INOTIFY.get(id(loop))
    if ino is None or ino.fd < 0 or ino.loop is not loop:
        ino = _INOTIFY[id(loop)] = _Inotify(loop)
    return ino


class Waker:
    """What a follower waits on: set when something changed in one of its directories.

    ``subscribe(directory)`` may be called again at any time (a follower that moves on to another
    file, a directory that appears later); failures are silent and leave the follower polling.
    """

    def __init__(
        self,
        *,
        use_inotify: bool = True,
        interested: Callable[[str], bool] | None = None,
        min_gap: float = MIN_GAP,
    ) -> None:
        self.event = asyncio.Event()
        self.changed: set[str] = set()
        self.use_inotify = use_inotify and _LIBC is not None
        self._dirs: set[str] = set()
        self._ino: _Inotify | None = None
        # Which changed paths concern this follower: many followers of one directory (32 logs
        # side by side) must not all wake up for every write to any of them.
        self.interested = interested
        self.min_gap = min_gap
        self._last_wake = -1e9
        self._timer: asyncio.TimerHandle | None = None
        self.wakes = 0

    def _on_change(self, paths: set[str]) -> None:
        if self.interested is not None:
            paths = {p for p in paths if p in self._dirs or self.interested(p)}
            if not paths:
                return
        self.changed |= paths
        if len(self.changed) > 4096:  # only a hint: keep it bounded
            self.changed = set(list(self.changed)[:4096])
        if self.event.is_set() or self._timer is not None:
            return
        loop = asyncio.get_running_loop()
        wait = self._last_wake + self.min_gap - loop.time()
        if wait > 0:
            self._timer = loop.call_later(wait, self._fire)
        else:
            self._fire()

    def _fire(self) -> None:
        self._timer = None
        self._last_wake = asyncio.get_running_loop().time()
        self.wakes += 1
        self.event.set()

    @property
    def watching(self) -> bool:
        ino = self._ino
        return ino is not None and ino.fd >= 0 and any(ino.alive(d) for d in self._dirs)

    def subscribe(self, directory: str) -> bool:
        """Watch ``directory`` (absolute); True when inotify is watching it."""
        if not self.use_inotify:
            return False
        directory = os.path.abspath(directory)
        try:
            ino = _inotify_for(asyncio.get_running_loop())
        except OSError:  # inotify instance limit reached
            return False
        if self._ino is not ino:
            self.unsubscribe_all()
            self._ino = ino
        if not (ino.alive(directory) and _same_dir(ino, directory)):
            try:
                if not ino.watch(directory):
                    return False
            except OSError:  # no such directory, no permission
                return False
        ino.subscribers.setdefault(directory, {})[id(self)] = self._on_change
        self._dirs.add(directory)
        return True

    def _release(self, directory: str) -> None:
        self._dirs.discard(directory)
        ino = self._ino
        if ino is None:
            return
        subs = ino.subscribers.get(directory)
        if subs is not None:
            subs.pop(id(self), None)
            if not subs:
                del ino.subscribers[directory]
                ino.unwatch(directory)

    def unsubscribe_all(self) -> None:
        for directory in list(self._dirs):
            self._release(directory)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def keep_only(self, directories: set[str]) -> None:
        for directory in list(self._dirs):
            if directory not in directories:
                self._release(directory)

    async def wait(self, timeout: float) -> set[str]:
        """Wait for a change or ``timeout`` seconds (to the grid point after them, with a wake
        grid); returns the changed paths (maybe none)."""
        if not self.event.is_set():
            if _grid is not None:
                now = asyncio.get_running_loop().time()
                timeout = next_grid_point(now + timeout) - now
            try:
                await wait_for(self.event.wait(), timeout)
            except TimeoutError:
                pass
        self.event.clear()
        changed, self.changed = self.changed, set()
        return changed


def _same_dir(ino: _Inotify, directory: str) -> bool:
    try:
        st = os.stat(directory)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == ino.identity.get(directory)
