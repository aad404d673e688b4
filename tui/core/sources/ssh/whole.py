"""Whole remote files over SSH: the bytes for ``specwatch summary host:/path`` (the file streamed
once, in bounded memory, :class:`RemoteFile`) and the draft model's ``config.json`` read over the
same connection. The summary itself is made above the pipeline, by the kind
(:mod:`tui.core.sources.kinds.remote_whole`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import asyncssh

from tui.core.formats import draft_config
from tui.core.sources.rotation import history_order, rotation_key
from tui.core.sources.ssh.auth import SshError, target_text
from tui.core.sources.ssh.connect import SharedConnection, SshSettings, acquire, release
from tui.core.sources.ssh.remote_side import (
    RemotePathError,
    parse_entries,
    parse_remote_path,
)
from tui.core.sources.ssh.scripts import cat_command, lister_command, new_tag
from tui.core.sources.target import SshTarget

READ = 1 << 16


class RemoteReadError(Exception):
    """``kind``: enoent, eacces, isdir, notfound, ssh, other; ``message`` is one line."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _remote_arg(path: str) -> str:
    return path[2:] if path.startswith("~/") else path


async def _open_cat(conn, path: str, limit: int, who: str):
    tag = new_tag()
    proc = await conn.create_process(
        cat_command(tag, _remote_arg(path), limit), encoding=None, stdin=asyncssh.DEVNULL
    )
    marker = tag.encode() + b" H "
    buf = b""
    while True:
        data = await proc.stdout.read(READ)
        if not data:
            err = (await proc.stderr.read(4096)).decode("utf-8", "replace").strip()
            proc.close()
            raise RemoteReadError(
                "other", f"{who}:{path}: the remote side gave no answer ({err or 'no output'})"
            )
        buf += data
        i = buf.find(marker)
        nl = buf.find(b"\n", i) if i >= 0 else -1
        if nl < 0:
            continue
        fields = buf[i + len(marker) : nl].decode("utf-8", "replace").split()
        rest = buf[nl + 1 :]
        if fields and fields[0] == "ok":
            mtime = float(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None
            return proc, rest, mtime
        proc.close()
        kind = fields[1] if len(fields) > 1 else "other"
        text = {
            "enoent": f"no such file: {who}:{path}",
            "eacces": f"permission denied: cannot read {who}:{path}",
            "isdir": f"{who}:{path} is a directory, not a log file",
            "notfound": f"`{fields[2] if len(fields) > 2 else '?'}` was not found on {who}",
        }.get(kind, f"cannot read {who}:{path} ({kind})")
        raise RemoteReadError(kind, text)


async def read_remote_file(shared: SharedConnection, path: str, limit: int) -> bytes:
    """At most ``limit`` bytes of a remote file; raises :class:`RemoteReadError`."""
    try:
        conn = await shared.get()
        proc, data, _ = await _open_cat(conn, path, limit, shared.who)
        chunks = [data]
        size = len(data)
        while size < limit:
            more = await proc.stdout.read(READ)
            if not more:
                break
            chunks.append(more)
            size += len(more)
        proc.close()
        return b"".join(chunks)[:limit]
    except SshError as exc:
        raise RemoteReadError("ssh", exc.message) from None
    except (asyncssh.Error, OSError) as exc:
        raise RemoteReadError("ssh", f"{shared.who}: {getattr(exc, 'reason', '') or exc}") from None


async def read_draft_facts(shared: SharedConnection, draft_path: str, family: str | None) -> dict[str, Any]:
    """``facts_from_json`` of ``DRAFT/config.json`` on the host; a note when it cannot be read."""
    where = f"{shared.who}:"
    if not draft_path.startswith(("/", "~/")):
        return {
            "config_path": None,
            "note": f"{draft_path!r} is not an absolute path on {shared.who} (a hub id?): config not read",
        }
    path = draft_path.rstrip("/") + "/config.json"
    try:
        data = await read_remote_file(shared, path, draft_config.MAX_CONFIG_BYTES + 1)
    except RemoteReadError as exc:
        note = {"enoent": "config.json not found", "eacces": "config.json unreadable: permission denied"}.get(
            exc.kind, f"config.json not read: {exc.message}"
        )
        return {"config_path": where + path, "note": note}
    if len(data) > draft_config.MAX_CONFIG_BYTES:
        return {"config_path": where + path, "note": "config.json larger than 4 MiB: not read"}
    return draft_config.facts_from_json(data, family, where + path)


async def attach_remote_drafts(stats: Any, shared: SharedConnection) -> None:
    """Fill ``config.draft`` of every segment naming a draft model, reading over ``shared``."""
    found: dict[tuple[str, str | None], dict] = {}
    for seg in stats.segments:
        cfg = seg.config
        if cfg.draft_model_path and not cfg.draft:
            key = (cfg.draft_model_path, cfg.family)
            if key not in found:
                found[key] = await read_draft_facts(shared, *key)
    draft_config.attach(stats, lambda p, f: found[(p, f)])


async def _matches(conn, rp, who: str) -> dict[str, float]:
    """The regular files matching the remote glob ``rp``: their paths and modification times."""
    tag = new_tag()
    result = await conn.run(lister_command(tag, rp, once=True), encoding=None, stdin=asyncssh.DEVNULL)
    out = result.stdout or b""
    t = tag.encode()
    i, j = out.find(t + b" S\n"), out.find(b"\n" + t + b" E\n")
    entries = parse_entries(out[i + len(t) + 3 : j], True) if 0 <= i < j else []
    found = {rp.join(e.name): e.mtime for e in entries if e.regular}
    if not found:
        raise RemoteReadError("enoent", f"no file matches {who}:{rp.text}")
    return found


async def _history(conn, rp, who: str, glob: bool) -> tuple[list[str], float]:
    """A remote glob's matches, or with a file name its rotated set (``NAME*`` whose rotation
    base is NAME), oldest first (:func:`history_order`); and the newest modification time."""
    if glob:
        found = await _matches(conn, rp, who)
    else:
        try:
            found = await _matches(conn, parse_remote_path(rp.text + "*"), who)
        except (RemoteReadError, RemotePathError):
            found = {}
        found = {p: m for p, m in found.items() if p == rp.text or rotation_key(p)[0] == rp.text}
        if not found:
            return [rp.text], 0.0
    return history_order(list(found), found), max(found.values())


class RemoteFile:
    """A remote file (a remote glob's matches, or a rotated set) read whole over one shared connection,
    in line-aligned chunks, then the draft configs it names over the same connection. Use as
    ``async with RemoteFile(target, settings) as rf``; raises :class:`RemoteReadError`."""

    def __init__(
        self, target: SshTarget, settings: SshSettings | None = None, *, history: bool = False
    ) -> None:
        """A glob's matches, or with ``history`` the file's rotated set, are :attr:`paths`,
        oldest first (read them with :meth:`raw`)."""
        try:
            self.rp = parse_remote_path(target.path)
        except RemotePathError as exc:
            raise RemoteReadError("other", f"{target.host}:{target.path}: {exc}") from None
        self.target = target
        self.who = target_text(target)
        self.path = target.path
        self.shared = acquire(target, settings or SshSettings())
        self.history = history
        self.paths = [self.path]  # the files read, oldest first (a glob's matches, a rotated set)
        self.newest_mtime: float | None = None
        self.mtime: float | None = None  # the file's, once reading began (None: not known)

    async def __aenter__(self) -> RemoteFile:
        try:
            self.conn = await self.shared.get()
            if self.rp.glob or self.history:
                self.paths, mtime = await _history(self.conn, self.rp, self.who, self.rp.glob)
                self.newest_mtime = mtime or None
                self.path = self.paths[-1]
        except SshError as exc:
            await release(self.shared)
            raise RemoteReadError("ssh", exc.message) from None
        except BaseException:
            await release(self.shared)
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await release(self.shared)

    async def raw(self, path: str | None = None) -> AsyncIterator[bytes]:
        """The bytes of the file (or of ``path``, one of :attr:`paths`) once, as they arrive
        (compressed bytes travel as they are)."""
        path = path or self.path
        try:
            proc, data, self.mtime = await _open_cat(self.conn, path, 0, self.who)
            if data:
                yield data
            while True:
                more = await proc.stdout.read(READ)
                if not more:
                    break
                yield more
            proc.close()
        except (asyncssh.Error, OSError) as exc:
            self.shared.mark_lost()
            raise RemoteReadError(
                "ssh",
                f"{self.who}: connection lost while reading {path}: {getattr(exc, 'reason', '') or exc}",
            ) from None

    async def attach_drafts(self, stats: Any) -> None:
        """Fills the draft configs ``stats``' segments name (see :func:`attach_remote_drafts`)."""
        await attach_remote_drafts(stats, self.shared)


async def line_chunks(pieces: AsyncIterator[bytes], size: int) -> AsyncIterator[bytes]:
    """``pieces`` of a stream regrouped in chunks of about ``size`` bytes that end at a line end
    (a last line without one gets it; a line longer than 4 × ``size`` is cut)."""
    pending = bytearray()
    async for more in pieces:
        pending += more
        if len(pending) < size:
            continue
        cut = pending.rfind(b"\n") + 1
        if cut == 0 and len(pending) < 4 * size:
            continue
        buf = bytes(pending[:cut] if cut else pending)
        del pending[: len(buf)]
        yield buf if buf.endswith(b"\n") else buf + b"\n"
    if pending:
        yield bytes(pending) if pending.endswith(b"\n") else bytes(pending) + b"\n"
