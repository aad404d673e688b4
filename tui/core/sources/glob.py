"""A glob (``'/data/logs/*.log'``): follow the newest matching file, and switch to a newer one.

The use case: a server relaunched with a fixed config writes a new log file next to the old one.
The source reads the newest match; when a file that was not there before becomes the newest
(its modification time reaches the current file's), the current file is read to its end and
the source switches: ``switched`` event (new segment) naming the new file.

Files that already existed when the current one was chosen never take over (no flapping back to
old logs); a file renamed inside the pattern (``server.log`` → ``server.log.1``) keeps its
identity, so the freshly created ``server.log`` is the newer match -- and as it has the current
file's name, that is reported as ``rotated``. Truncation is handled as for a single file.
"""

from __future__ import annotations

import fnmatch
import glob as _glob
import os
import stat
import time

from tui.core.sources.base import EventKind
from tui.core.sources.file import Follower
from tui.core.sources.openfile import OpenFile
from tui.core.sources.target import has_magic


class GlobSource(Follower):
    """Follows the newest file matching ``pattern``; with ``follow=False`` reads it once."""

    SWITCH_KIND = EventKind.SWITCHED

    def __init__(self, pattern: str, name: str | None = None, **options) -> None:
        self.pattern = os.path.expanduser(pattern)
        self.where = os.path.abspath(self.pattern)
        directory, _ = os.path.split(self.where)
        # Inotify on the pattern's directory when only the last component has wildcards; deeper
        # patterns are rescanned on each poll.
        self._pattern_dir = None if has_magic(directory) else directory
        self._known: set[tuple[int, int]] | None = None  # files present when the current was chosen
        self._last_scan = 0.0
        self.matches = 0
        super().__init__(name or pattern, **options)

    def _scan(self) -> list[tuple[str, os.stat_result]]:
        found = []
        for path in _glob.glob(self.pattern, recursive="**" in self.pattern):
            try:
                st = os.stat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                found.append((path, st))
        found.sort(key=lambda m: (m[1].st_mtime_ns, m[0]))
        self.matches = len(found)
        return found

    def _needs_scan(self, changed: set[str] | None) -> bool:
        f = self.current
        if f is None or not changed:
            return True
        if time.monotonic() - self._last_scan >= self.safety_interval:
            return True
        here = os.path.abspath(f.path)
        return any(p != here for p in changed)

    def _target(self, changed: set[str] | None) -> tuple[str, os.stat_result] | None:
        f = self.current
        if not self._needs_scan(changed):
            return f.path, os.fstat(f.fd)  # type: ignore[union-attr]
        self._last_scan = time.monotonic()
        found = self._scan()
        if f is None:
            if not found:
                return None
            self._known = {(st.st_dev, st.st_ino) for _, st in found}
            return found[-1]
        cur = os.fstat(f.fd)
        known = self._known or set()
        newer = [
            m
            for m in found
            if (m[1].st_dev, m[1].st_ino) not in known
            and (m[1].st_dev, m[1].st_ino) != f.identity
            and m[1].st_mtime_ns >= cur.st_mtime_ns
        ]
        if not newer:
            return f.path, cur
        self._known = {(st.st_dev, st.st_ino) for _, st in found}
        return newer[-1]

    def _interested(self, path: str) -> bool:
        return fnmatch.fnmatchcase(path, self.where) or self._is_current(path)  # inotify paths are absolute

    def _directories(self) -> set[str]:
        dirs = set()
        if self._pattern_dir is not None:
            dirs.add(self._pattern_dir)
        if self.current is not None:
            dirs.add(os.path.dirname(os.path.realpath(self.current.path)))
        return dirs

    def _waiting_message(self) -> str:
        return f"no file matches {self.pattern} yet; waiting for one"

    def _missing_message(self) -> str:
        return f"no file matches {self.pattern}"

    def _open_note(self) -> str:
        return f" (the newest of {self.matches} matching files)" if self.matches > 1 else ""

    def _switch_kind(self, old: OpenFile, new_path: str) -> EventKind:
        # the same name on a new file is a rotation; another name is a switch
        return (
            EventKind.ROTATED
            if os.path.abspath(new_path) == os.path.abspath(old.path)
            else EventKind.SWITCHED
        )

    def _switch_message(self, old: OpenFile, new_path: str) -> str:
        if self._switch_kind(old, new_path) == EventKind.ROTATED:
            return f"{new_path} now points at a new file (rotated)"
        return f"{new_path} is a newer match of {self.pattern}"
