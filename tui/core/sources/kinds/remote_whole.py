"""``specwatch summary host:/path``: a remote file's bytes (:class:`tui.core.sources.ssh.whole.RemoteFile`)
through the pipeline's :class:`tui.core.pipeline.whole.Summarizer`, then the draft configs it
names read over the same connection. Here, above the pipeline, so that the SSH source itself
only delivers bytes."""

from __future__ import annotations

import asyncio

from tui.core.formats.fastscan import scan_chunk
from tui.core.pipeline.whole import CHUNK, Summarizer
from tui.core.sources.ssh.connect import SshSettings
from tui.core.sources.ssh.whole import RemoteFile
from tui.core.sources.target import SshTarget


async def summarize_remote(
    target: SshTarget, label: str | None, source: str, settings: SshSettings | None = None
) -> Summarizer:
    """Streams the remote file once through a :class:`Summarizer` (memory bounded by the chunk
    size), then reads the draft configs it names over the same connection; raises
    :class:`tui.core.sources.ssh.whole.RemoteReadError`."""
    async with RemoteFile(target, settings) as rf:
        s = Summarizer(source, label)
        offset = 0
        async for buf in rf.chunks(CHUNK):
            s.feed(buf, offset, scan_chunk(buf) if s.can_fast else None)
            offset += len(buf)
        await rf.attach_drafts(s.stats)
        return s


def summarize_ssh(
    target: SshTarget, label: str | None, source: str, settings: SshSettings | None = None
) -> Summarizer:
    return asyncio.run(summarize_remote(target, label, source, settings))
