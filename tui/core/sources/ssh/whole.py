"""Whole remote files over SSH: ``specwatch summary host:/path`` (the file streamed once, in
bounded memory) and the draft model's ``config.json`` read over the same connection."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncssh

from tui.core.formats import draft_config
from tui.core.formats.fastscan import scan_chunk
from tui.core.pipeline.whole import CHUNK, Summarizer
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
            return proc, rest
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
        proc, data = await _open_cat(conn, path, limit, shared.who)
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


async def _newest_match(conn, rp, who: str) -> str:
    tag = new_tag()
    result = await conn.run(lister_command(tag, rp, once=True), encoding=None, stdin=asyncssh.DEVNULL)
    out = result.stdout or b""
    t = tag.encode()
    i, j = out.find(t + b" S\n"), out.find(b"\n" + t + b" E\n")
    entries = parse_entries(out[i + len(t) + 3 : j], True) if 0 <= i < j else []
    found = sorted((e for e in entries if e.regular), key=lambda e: (e.mtime, e.name))
    if not found:
        raise RemoteReadError("enoent", f"no file matches {who}:{rp.text}")
    return rp.join(found[-1].name)


async def summarize_remote(
    target: SshTarget, label: str | None, source: str, settings: SshSettings | None = None
) -> Summarizer:
    """Streams the remote file once through a :class:`Summarizer` (memory bounded by the chunk
    size), then reads the draft configs it names over the same connection."""
    try:
        rp = parse_remote_path(target.path)
    except RemotePathError as exc:
        raise RemoteReadError("other", f"{target.host}:{target.path}: {exc}") from None
    shared = acquire(target, settings or SshSettings())
    who = target_text(target)
    try:
        try:
            conn = await shared.get()
        except SshError as exc:
            raise RemoteReadError("ssh", exc.message) from None
        path = await _newest_match(conn, rp, who) if rp.glob else target.path
        s = Summarizer(source, label)
        try:
            proc, data = await _open_cat(conn, path, 0, who)
            offset = 0
            pending = bytearray(data)
            while True:
                more = await proc.stdout.read(READ)
                if more:
                    pending += more
                if len(pending) >= CHUNK or (not more and pending):
                    cut = pending.rfind(b"\n") + 1 if more else len(pending)
                    if cut == 0 and len(pending) < 4 * CHUNK:
                        continue
                    buf = bytes(pending[:cut] if cut else pending)
                    del pending[: len(buf)]
                    if not buf.endswith(b"\n"):
                        buf += b"\n"
                    s.feed(buf, offset, scan_chunk(buf) if s.can_fast else None)
                    offset += len(buf)
                if not more:
                    break
            proc.close()
        except (asyncssh.Error, OSError) as exc:
            shared.mark_lost()
            raise RemoteReadError(
                "ssh", f"{who}: connection lost while reading {path}: {getattr(exc, 'reason', '') or exc}"
            ) from None
        await attach_remote_drafts(s.stats, shared)
        return s
    finally:
        await release(shared)


def summarize_ssh(
    target: SshTarget, label: str | None, source: str, settings: SshSettings | None = None
) -> Summarizer:
    return asyncio.run(summarize_remote(target, label, source, settings))
