"""``specwatch summary host:/path``: a remote file's bytes (:class:`tui.core.sources.ssh.whole.RemoteFile`)
through the pipeline's :class:`tui.core.pipeline.whole.Summarizer`, then the draft configs it
names read over the same connection. Here, above the pipeline, so that the SSH source itself
only delivers bytes. A compressed file's bytes travel as they are and are decompressed here
(:mod:`tui.core.sources.compressed`, recognised by their first bytes)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from tui.core.pipeline.whole import CHUNK, Summarizer
from tui.core.sources.compressed import SNIFF, Inflater, sniff
from tui.core.sources.logset import Member
from tui.core.sources.ssh.connect import SshSettings
from tui.core.sources.ssh.whole import RemoteFile, line_chunks
from tui.core.sources.target import SshTarget
from tui.core.sources.window import Cutter, Window


class _Decoded:
    """The remote bytes, decompressed when they are compressed; what was read, as a
    :class:`Member` (for ``files`` and the warnings)."""

    def __init__(self, raw: AsyncIterator[bytes], where: str) -> None:
        self.raw = raw
        self.member = Member(where, None, 0, 0.0)
        self._first = True  # the first decompressed bytes tell a binary file

    async def pieces(self) -> AsyncIterator[bytes]:
        head = b""
        async for data in self.raw:
            head += data
            if len(head) >= SNIFF:
                break
        compression = sniff(head)
        m = self.member
        m.compression = compression
        # whole lines, as a local file's reader takes them: a line that damage cuts is dropped,
        # never joined to the first line of the next intact zstd frame
        inflater = Inflater(compression, whole_lines=True) if compression else None
        async for data in _prepend(head, self.raw):
            m.raw_size += len(data)
            for out in list(inflater.feed(data)) if inflater is not None else [data]:
                yield self._counted(out)
        if inflater is not None:
            tail = inflater.end()
            m.problem, m.resumed = inflater.problem, bool(inflater.resumed)
            if tail:
                yield self._counted(tail)

    def _counted(self, out: bytes) -> bytes:
        if self._first and out:
            from tui.core.sources.logset import looks_binary

            self.member.binary, self._first = looks_binary(out), False
        self.member.bytes += len(out)
        return out


async def _prepend(head: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if head:
        yield head
    async for data in rest:
        yield data


async def _one_after_another(rf: RemoteFile, members: list[Member]) -> AsyncIterator[bytes]:
    """The files of ``rf`` in order, decompressed, a newline after one whose last line has none."""
    for path in rf.paths:
        decoded = _Decoded(rf.raw(path), f"{rf.who}:{path}")
        members.append(decoded.member)
        last = b"\n"
        async for out in decoded.pieces():
            last = out[-1:]
            yield out
        if decoded.member.bytes and last != b"\n":
            decoded.member.bytes += 1
            yield b"\n"


async def summarize_remote(
    target: SshTarget,
    label: str | None,
    source: str,
    settings: SshSettings | None = None,
    window: Window | None = None,
    history: bool = False,
) -> Summarizer:
    """Streams the remote file (a glob's matches, with ``history`` its rotated set: oldest first,
    one after the other) once through a :class:`Summarizer` (memory bounded by the chunk size),
    then reads the draft configs it names over the same connection; raises
    :class:`tui.core.sources.ssh.whole.RemoteReadError`."""
    async with RemoteFile(target, settings, history=history) as rf:
        s: Summarizer | None = None
        members: list[Member] = []
        cutter: Cutter | None = None
        offset = 0
        async for buf in line_chunks(_one_after_another(rf, members), CHUNK):
            if s is None:  # the file's mtime is known once reading began: year-less stamps' year
                ref = rf.newest_mtime or rf.mtime
                s = Summarizer(source, label, ref_time=ref)
                cutter = Cutter(window, ref, context=True) if window else None
            at, offset = offset, offset + len(buf)
            s.read_cut(buf, at, cutter)  # the local reader's step: scanned with its stamps' year
        if s is None:
            s = Summarizer(source, label, ref_time=rf.mtime)
        s.files = [m.to_dict() for m in members]
        s.input_warnings = [w for m in members for w in m.warnings()]
        if window and cutter is not None:
            s.window = {**window.to_dict(), **cutter.report()}
        await rf.attach_drafts(s.stats)
        return s


def summarize_ssh(
    target: SshTarget,
    label: str | None,
    source: str,
    settings: SshSettings | None = None,
    window: Window | None = None,
    history: bool = False,
) -> Summarizer:
    return asyncio.run(summarize_remote(target, label, source, settings, window, history))
