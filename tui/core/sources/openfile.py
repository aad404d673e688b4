"""An open local file being read in step with its line splitter and fingerprint (used by the
file and glob followers), and the one-line wording of a local file's read errors."""

from __future__ import annotations

import errno
import os
import stat

from tui.core.sources.base import LineBatch
from tui.core.sources.identity import WINDOW, FileLook, Fingerprint, Look, decide
from tui.core.sources.lines import LineSplitter, make_batch

READ_CHUNK = 1 << 20


class OpenFile:
    """An open regular file being read: descriptor, identity, position and line splitter."""

    def __init__(self, path: str, fd: int, st: os.stat_result) -> None:
        self.path = path
        self.fd = fd
        self.identity = (st.st_dev, st.st_ino)
        self.splitter = LineSplitter()
        self.fp = Fingerprint()  # the bytes read, to notice "truncated and refilled"
        self._seen = (st.st_size, st.st_mtime_ns)
        self.size_before = st.st_size  # the size at the look before the last (what it had grown to)

    @classmethod
    def open(cls, path: str) -> OpenFile:
        """Opens ``path`` for reading; raises OSError (IsADirectoryError for a non-file)."""
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory", path)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", path)
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd, st)

    @property
    def pos(self) -> int:
        return self.splitter.pos

    def seek(self, offset: int, line_no: int) -> None:
        self.splitter.reset(offset, line_no)
        head = os.pread(self.fd, min(offset, WINDOW), 0)
        self.fp.reset(offset, 0, head, os.pread(self.fd, min(offset, WINDOW), offset - min(offset, WINDOW)))

    def read(self, source: str, limit: int = READ_CHUNK) -> LineBatch | None | bool:
        """One chunk as a batch; None when the chunk held no complete line; False at EOF."""
        data = os.pread(self.fd, limit, self.splitter.pos)
        if not data:
            return False
        self.fp.feed(data)
        return make_batch(source, self.splitter.feed(data), self.path)

    def flush(self, source: str) -> LineBatch | None:
        return make_batch(source, self.splitter.flush(), self.path)

    def truncation(self) -> str | None:
        """Why the file must be read again from its start, or None."""
        st = os.fstat(self.fd)
        pos = self.splitter.pos
        seen = (st.st_size, st.st_mtime_ns)
        if st.st_size >= pos and seen == self._seen:
            return None
        self.size_before, self._seen = self._seen[0], seen
        same = self.fp.same_bytes(lambda at, n: os.pread(self.fd, n, at)) if st.st_size >= pos else None
        ident = f"{st.st_dev}:{st.st_ino}"
        d = decide(ident, pos, Look(FileLook(ident, st.st_size, same)))
        return d.why if d.action == "restart" else None

    def close(self) -> None:
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1


def describe_oserror(exc: OSError, path: str) -> str:
    if isinstance(exc, PermissionError):
        return f"permission denied: cannot read {path}"
    if isinstance(exc, IsADirectoryError):
        return f"{path} is a directory, not a log file"
    if isinstance(exc, FileNotFoundError):
        return f"no such file: {path}"
    return f"cannot read {path}: {exc.strerror or exc}"
