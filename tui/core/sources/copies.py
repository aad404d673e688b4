"""A local file was truncated (or rewritten) under the follower: where did its old bytes go?

After a copytruncate (``cp f f.1; : > f``, logrotate's ``copytruncate``) the lines written just
before the copy are only in the copy. The same rule as over SSH (:data:`.ssh.scripts.COPIES`,
:func:`.identity.copy_decision`) finds it: a regular file named ``NAME?*`` in the file's
directory (``NAME.1``, ``NAME-20260601``), at least as long as what was read, whose bytes where
the follower's :class:`.identity.Fingerprint` was taken (its first and last 4 KiB read) are the
same. Then the rest of the old content is read from it, from the byte the follower had reached.
"""

from __future__ import annotations

import asyncio
import errno
import os
import stat
from collections.abc import AsyncIterator, Callable, Iterator

from tui.core.sources.base import Batch, EventKind, SourceEvent
from tui.core.sources.identity import FileLook, Fingerprint, copy_decision, drained_note, unread_note
from tui.core.sources.lines import make_batch
from tui.core.sources.openfile import OpenFile, describe_oserror

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
            same = _same(fd, fp)
        except OSError:
            continue
        finally:
            os.close(fd)
        found.append((st.st_mtime_ns, FileLook(f"{st.st_dev}:{st.st_ino}", st.st_size, same, full)))
        if len(found) >= MAX_COPIES:
            break
    found.sort(key=lambda x: -x[0])
    return tuple(look for _, look in found)


def _same(fd: int, fp: Fingerprint) -> bool:
    def read(at: int, n: int) -> bytes:
        return os.pread(fd, n, at)

    return fp.same_bytes(read)


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


async def after_truncation(
    f: OpenFile, why: str, source: str, event: Callable[..., SourceEvent]
) -> AsyncIterator[Batch]:
    """``f`` must be read again from its start (``why``): first the rest of the old content from
    a copy holding the same bytes, then the ``truncated`` event saying what was read from it (its
    name, bytes and lines) and what could not be; ``f`` is left at its start."""
    old = f.pos
    d = copy_decision(why, old, local_copies(f.path, f.identity, f.fp, old) if old else None)
    note, rest = d.old_note, {}
    failed = ""
    if d.drain is not None:
        copy, start, _ = d.drain
        first = f.splitter.line_no
        try:
            for data in read_copy(copy, d.drain_identity, start):
                b = make_batch(source, f.splitter.feed(data), f.path)
                if b is not None:
                    yield b
                await asyncio.sleep(0)
        except OSError as exc:
            failed = describe_oserror(exc, copy)
    last = f.flush(source)
    if last is not None:
        yield last
    if d.drain is not None:
        lines = f.splitter.line_no - first
        note = drained_note(True, copy, start, f.pos, lines)
        rest = {"rest_path": copy, "rest_from": start, "rest_to": f.pos, "rest_lines": lines}
        if failed:
            note += f", then {failed}: whatever followed in it was not read"
            rest["old_rest"] = "lost"
    if old and d.old_rest != "lost" and f.size_before > f.pos:  # it had more than the copy holds
        note += "; " + unread_note(f.pos, f.size_before)
        rest["old_rest"] = "lost"
    f.seek(0, 1)
    yield event(
        EventKind.TRUNCATED,
        f"{f.path} {why}{'; ' + note if note else ''}; reading it again from the start",
        f.path,
        **{"old_size": old, "inode": f.identity[1], "old_rest": d.old_rest or "read", **rest},
    )
