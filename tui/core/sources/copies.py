"""A local file was truncated (or rewritten) under the follower: where did its old bytes go?

After a copytruncate (``cp f f.1; : > f``, logrotate's ``copytruncate``) the lines written just
before the copy are only in the copy. The same rule as over SSH (:data:`.ssh.scripts.COPIES`,
:func:`.identity.copy_decision`) finds it: a regular file named ``NAME?*`` in the file's
directory (``NAME.1``, ``NAME-20260601``), at least as long as what was read, whose bytes where
the follower's :class:`.identity.Fingerprint` was taken (its first and last 4 KiB read) are the
same. Then the rest of the old content is read from it, from the byte the follower had reached.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator

from tui.core.sources.identity import FileLook, Fingerprint

MAX_COPIES = 8  # candidates looked at (as on a remote host)
CHUNK = 1 << 20


def _open(path: str) -> int:
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))


def local_copies(path: str, identity: tuple[int, int], fp: Fingerprint, pos: int) -> tuple[FileLook, ...]:
    """Files that may be copies of ``path`` (read to byte ``pos``, fingerprint ``fp``), newest
    first; ``same`` says whether they hold the bytes read. A link is looked for next to the
    file it points at."""
    real = os.path.realpath(path) if os.path.islink(path) else path
    folder, base = os.path.split(real)
    try:
        names = [n for n in os.listdir(folder or ".") if len(n) > len(base) and n.startswith(base)]
    except OSError:
        return ()
    found: list[tuple[int, FileLook]] = []
    for name in sorted(names):
        full = os.path.join(folder, name)
        try:
            fd = _open(full)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size < pos or (st.st_dev, st.st_ino) == identity:
                continue
            same = fp.same_bytes(lambda at, n, fd=fd: os.pread(fd, n, at))
        except OSError:
            continue
        finally:
            os.close(fd)
        found.append((st.st_mtime_ns, FileLook(f"{st.st_dev}:{st.st_ino}", st.st_size, same, full)))
        if len(found) >= MAX_COPIES:
            break
    found.sort(key=lambda x: -x[0])
    return tuple(look for _, look in found)


def read_copy(path: str, identity: str, start: int) -> Iterator[bytes]:
    """The bytes of the copy ``path`` from ``start`` to its end, in chunks; OSError when it
    cannot be read or is no longer the file ``identity`` (``dev:ino``)."""
    fd = _open(path)
    try:
        st = os.fstat(fd)
        if f"{st.st_dev}:{st.st_ino}" != identity:
            raise OSError(errno.ESTALE, "replaced since it was checked", path)
        at = start
        while True:
            data = os.pread(fd, CHUNK, at)
            if not data:
                return
            at += len(data)
            yield data
    finally:
        os.close(fd)
