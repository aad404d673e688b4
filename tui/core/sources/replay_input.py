"""What a replay (and ``stream --no-follow`` of a compressed file or a window) reads: the bytes of
a file or a rotated set, by offset (:class:`ReplayInput`).

A single plain file is read with ``pread``; a compressed file or a set goes through a
:class:`tui.core.sources.logset.LogSet` (decompressed as it is read; a jump back far reads it
again from its start). With a ``--since``/``--until`` window only the window's bytes are shown,
offsets counted from its first line: a plain file's window is found by binary search on its
timestamps, a stream's by reading it once (:mod:`tui.core.sources.window`).
"""

from __future__ import annotations

import os

from tui.core.sources.logset import KEEP, LogSet
from tui.core.sources.window import Cutter, Window
from tui.core.sources.window_search import file_range


class ReplayInput:
    """``paths`` (oldest first) as one run of bytes; raises OSError when one cannot be opened."""

    def __init__(self, paths: list[str], window: Window | None = None) -> None:
        self.paths = paths
        self.window = window
        self._set = LogSet(paths, keep=KEEP)
        self._fd = -1
        self.lo, self.hi = 0, 0
        self.mtime = self._set.mtime
        if len(paths) == 1 and not self._set.compressed:
            self._fd = os.open(paths[0], os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            size = os.fstat(self._fd).st_size
            self.lo, self.hi = file_range(self._fd, size, window, self.mtime) if window else (0, size)
        elif window:
            self.lo, self.hi = self._stream_range(window)
        else:
            self.hi = -1  # unknown until the end

    def _stream_range(self, window: Window) -> tuple[int, int]:
        """The window's bytes in the set, found by reading it once (line by line only around
        the window's edges: :class:`Cutter`)."""
        cutter = Cutter(window, self.mtime)
        pos, rest = 0, b""
        while not cutter.done:
            data = self._set.read(1 << 20)
            buf = rest + (data if data else b"\n" if rest else b"")
            if not buf:
                break
            cut = buf.rfind(b"\n") + 1
            rest = buf[cut:]
            if cut:
                cutter.cut(buf[:cut], pos)
                pos += cut
            if not data:
                break
        if cutter.first_offset is None:
            return 0, 0
        return cutter.first_offset, pos if cutter.end_offset is None else cutter.end_offset

    @property
    def size(self) -> int:
        """The bytes shown (for a set still being read: its bytes so far)."""
        return self.hi - self.lo if self.hi >= 0 else self._set.pos

    def progress(self, offset: int) -> float:
        if self.hi >= 0:
            return min(1.0, offset / (self.hi - self.lo)) if self.hi > self.lo else 1.0
        total = self._set.raw_size
        return min(1.0, self._set.raw_done() / total) if total else 1.0

    def pread(self, n: int, offset: int) -> bytes:
        if self.hi >= 0:
            n = max(0, min(n, self.hi - self.lo - offset))
            if not n:
                return b""
        if self._fd >= 0:
            return os.pread(self._fd, n, self.lo + offset)
        return self._set.pread(n, self.lo + offset)

    def warnings(self) -> list[str]:
        return self._set.warnings()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self._set.close()
