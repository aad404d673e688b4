"""Wake-ups for file followers: inotify (through ``watchfiles``) where available, else polling.

One watcher thread per watched directory, shared by every follower of a file in it (a glob and
a file in the same directory cost one thread). The thread waits in watchfiles' Rust code and
hands changes to the event loop with ``call_soon_threadsafe``; followers wait on an
``asyncio.Event`` with a timeout, so polling is always the fallback: a lost or impossible watch
(no inotify, network file system, directory missing or replaced) only makes wake-ups slower.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable

from tui.core.sources.aio import wait_for

try:  # pragma: no cover - import guard
    from watchfiles._rust_notify import RustNotify
except Exception:  # pragma: no cover - watchfiles missing or unusable: poll
    RustNotify = None  # type: ignore[assignment,misc]

DEBOUNCE_MS = 25  # group changes at most this long before waking the readers
STEP_MS = 10  # changes are handed over after this long without a new one
TIMEOUT_MS = 500  # how often the thread looks at its stop flag when nothing happens


def inotify_available() -> bool:
    return RustNotify is not None


class _DirWatch:
    """A watcher thread on one directory; calls its subscribers on the event loop."""

    def __init__(self, directory: str, loop: asyncio.AbstractEventLoop) -> None:
        self.directory = directory
        self.loop = loop
        self.subscribers: dict[int, Callable[[set[str]], None]] = {}
        self.stop = threading.Event()
        st = os.stat(directory)
        self.identity = (st.st_dev, st.st_ino)
        self.notify = RustNotify([directory], False, False, 300, False, True)
        self.thread = threading.Thread(target=self._run, name=f"specwatch-watch:{directory}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        notify = self.notify
        try:
            while not self.stop.is_set():
                try:
                    changes = notify.watch(DEBOUNCE_MS, STEP_MS, TIMEOUT_MS, self.stop)
                except Exception:  # the watch broke (directory gone, ...): polling takes over
                    return
                if isinstance(changes, set) and changes:
                    paths = {p for _, p in changes}
                    try:
                        self.loop.call_soon_threadsafe(self._dispatch, paths)
                    except RuntimeError:  # loop closed
                        return
        finally:
            try:
                notify.close()
            except Exception:
                pass

    def _dispatch(self, paths: set[str]) -> None:
        for callback in list(self.subscribers.values()):
            callback(paths)

    @property
    def alive(self) -> bool:
        return self.thread.is_alive()

    def close(self) -> None:
        self.stop.set()


_WATCHES: dict[tuple[int, str], _DirWatch] = {}


class Waker:
    """What a follower waits on: set when something changed in one of its directories.

    ``subscribe(directory)`` may be called again at any time (a follower that moves on to another
    file, a directory that appears later); failures are silent and leave the follower polling.
    """

    def __init__(self, *, use_inotify: bool = True, interested: Callable[[str], bool] | None = None) -> None:
        self.event = asyncio.Event()
        self.changed: set[str] = set()
        self.use_inotify = use_inotify and RustNotify is not None
        self._dirs: dict[str, _DirWatch] = {}
        # Which changed paths concern this follower: many followers of one directory (32 logs
        # side by side) must not all wake up for every write to any of them.
        self.interested = interested

    def _on_change(self, paths: set[str]) -> None:
        if self.interested is not None:
            paths = {p for p in paths if p in self._dirs or self.interested(p)}
            if not paths:
                return
        self.changed |= paths
        if len(self.changed) > 4096:  # only a hint: keep it bounded
            self.changed = set(list(self.changed)[:4096])
        self.event.set()

    @property
    def watching(self) -> bool:
        return any(w.alive for w in self._dirs.values())

    def subscribe(self, directory: str) -> bool:
        """Watch ``directory`` (absolute); True when inotify is watching it."""
        if not self.use_inotify:
            return False
        directory = os.path.abspath(directory)
        w = self._dirs.get(directory)
        if w is not None:
            if w.alive and _same_dir(w):
                return True
            self._release(directory)
        loop = asyncio.get_running_loop()
        key = (id(loop), directory)
        w = _WATCHES.get(key)
        if w is None or not w.alive or not _same_dir(w) or w.loop is not loop:
            if w is not None:
                w.close()
            try:
                w = _DirWatch(directory, loop)
            except Exception:  # no such directory, no permission, inotify limit reached
                _WATCHES.pop(key, None)
                return False
            _WATCHES[key] = w
        w.subscribers[id(self)] = self._on_change
        self._dirs[directory] = w
        return True

    def _release(self, directory: str) -> None:
        w = self._dirs.pop(directory, None)
        if w is None:
            return
        w.subscribers.pop(id(self), None)
        if not w.subscribers:
            w.close()
            for key, other in list(_WATCHES.items()):
                if other is w:
                    del _WATCHES[key]

    def unsubscribe_all(self) -> None:
        for directory in list(self._dirs):
            self._release(directory)

    def keep_only(self, directories: set[str]) -> None:
        for directory in list(self._dirs):
            if directory not in directories:
                self._release(directory)

    async def wait(self, timeout: float) -> set[str]:
        """Wait for a change or ``timeout`` seconds; returns the changed paths (maybe none)."""
        if not self.event.is_set():
            try:
                await wait_for(self.event.wait(), timeout)
            except TimeoutError:
                pass
        self.event.clear()
        changed, self.changed = self.changed, set()
        return changed


def _same_dir(w: _DirWatch) -> bool:
    try:
        st = os.stat(w.directory)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == w.identity
