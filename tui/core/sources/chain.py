"""Every generation, by identity, for a local file (the rule of :mod:`.generations`, as over SSH).

When the followed name points at a new file, the old one is finished (read until quiet, it stays
open), then the rotated set is listed here (``NAME``, ``NAME.1``, ``NAME.2.gz``, dated names)
and every generation older than the new file that was not read to its end is read in order --
the rest of a known one from its byte, a new one whole, a compressed one decompressed -- before
the new file is followed. :class:`LocalCatchUp` says what it read and what is gone.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator

from tui.core.sources.base import Batch
from tui.core.sources.compressed import SNIFF, InflatingReader, sniff
from tui.core.sources.generations import Gen, Listed, Step, plan, read_note, read_phrase, remember
from tui.core.sources.identity import WINDOW
from tui.core.sources.lines import LineSplitter, make_batch
from tui.core.sources.openfile import OpenFile
from tui.core.sources.rotation import history_order, rotation_key

CHUNK = 1 << 20


def _ident(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}"


def gen_of(f: OpenFile) -> Gen:
    """The generation ``f`` (read to ``f.pos``) is."""
    st = os.fstat(f.fd)
    head = os.pread(f.fd, min(WINDOW, f.pos), 0) if f.pos else b""
    return Gen(
        f"{f.identity[0]}:{f.identity[1]}", f.pos, f.splitter.line_no, st.st_size, st.st_mtime, head, f.path
    )


def _copy_of(e: Listed, head: bytes) -> bool:
    """Whether ``e`` is a compressed copy of the file whose first bytes are ``head`` (the rule
    :func:`.generations.plan` knows generations by)."""
    return bool(head) and e.compression is not None and e.head is not None and e.head.startswith(head)


class LocalCatchUp:
    """One catch-up of the set of ``path`` (see the module notes); ``chain``: the follower's."""

    def __init__(self, path: str, chain: list[Gen], heads: dict[tuple[str, int], bytes]) -> None:
        self.path = path
        self.folder, self.base = os.path.split(path)
        self.chain = chain
        self.heads = heads
        self.read: list[dict] = []
        self.notes: list[str] = []
        self.lost: list[str] = []
        self.lost_generations = 0

    def listing(self) -> list[Listed]:
        try:
            names = os.listdir(self.folder or ".")
        except OSError:
            return []
        known = {g.identity: g for g in self.chain}
        out = []
        for n in names:
            if not n.startswith(self.base) or (n != self.base and rotation_key(n)[0] != self.base):
                continue
            full = os.path.join(self.folder, n)
            try:
                fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
            except OSError:
                continue
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    continue
                ident = _ident(st)
                kind = sniff(os.pread(fd, SNIFF, 0))
                same = None
                g = known.get(ident)
                if kind is None and g is not None and g.head:
                    same = os.pread(fd, len(g.head), 0) == g.head
                head = self._head(fd, ident, st.st_size, kind) if kind else None
            except OSError:
                continue
            finally:
                os.close(fd)
            out.append(Listed(n, ident, st.st_size, st.st_mtime, kind, same, head))
        return out

    def _head(self, fd: int, ident: str, size: int, kind: str) -> bytes:
        key = (ident, size)
        if key not in self.heads:
            if len(self.heads) > 256:
                self.heads.clear()
            r = InflatingReader(os.fdopen(os.dup(fd), "rb"), kind, read_size=1 << 16)
            try:
                self.heads[key] = r.read(WINDOW)
            finally:
                r.close()
        return self.heads[key]

    async def run(self, old: Gen, new_identity: str, new_head: bytes, source: str) -> AsyncIterator[Batch]:
        """Reads what the set holds between ``old`` (finished) and the new file ``new_identity``
        (its first bytes ``new_head``: the new file may itself have been rotated and compressed
        while the old one was finished; its compressed copy, and all that is newer, waits too)."""
        remember(self.chain, old)
        listing = self.listing()
        ordered = history_order([e.name for e in listing], {e.name: e.mtime for e in listing})
        p = plan(self.chain, listing, self.base, ordered)
        at = {e.name for e in listing if e.identity == new_identity or _copy_of(e, new_head)}
        stop = next((i for i, n in enumerate(ordered) if n in at), len(ordered))
        before = set(ordered[:stop])  # the new file is followed: only what is older is read now
        for g in p.lost_known:
            g.closed = True
        self.lost += p.lost
        self.lost_generations += p.lost_generations
        for step in p.steps:
            if step.name in before:
                async for b in self._read(step, source):
                    yield b

    async def _read(self, step: Step, source: str) -> AsyncIterator[Batch]:
        full = os.path.join(self.folder, step.name)
        try:
            raw = open(full, "rb")
        except OSError:
            return
        sp = LineSplitter()
        sp.reset(step.start, step.gen.line_no if step.gen is not None else 1)
        first = sp.line_no
        g = step.gen or Gen(step.identity, name=step.name)
        try:
            if _ident(os.fstat(raw.fileno())) != step.identity:
                return  # replaced since the listing: found by the next one
            if step.compression:
                r: InflatingReader | None = InflatingReader(raw, step.compression)
                skip = step.start
                while skip:
                    got = len(r.read(min(skip, CHUNK)))  # type: ignore[union-attr]
                    if not got:
                        break
                    skip -= got
            else:
                r = None
                raw.seek(step.start)
            while data := (r.read(CHUNK) if r is not None else raw.read(CHUNK)):
                if step.gen is None and len(g.head) < WINDOW and sp.pos == len(g.head):
                    g.head += data[: WINDOW - len(g.head)]
                b = make_batch(source, sp.feed(data), full)
                if b is not None:
                    yield b
                await asyncio.sleep(0)
            b = make_batch(source, sp.flush(), full)
            if b is not None:
                yield b
        finally:
            raw.close()
        lines = sp.line_no - first
        g.pos, g.line_no, g.closed, g.name = sp.pos, sp.line_no, True, step.name
        g.size = max(g.size, sp.pos)
        remember(self.chain, g)
        self.read.append(
            {"path": full, "from": step.start, "to": sp.pos, "lines": lines, "compression": step.compression}
        )
        note = read_note(step.name, step.start, sp.pos, lines, step.compression)
        if r is not None and r.problem:
            note += f" ({r.problem})"
        self.notes.append(note)

    def phrase(self) -> str:
        """What the catch-up read and what is gone, for the event ("" when nothing)."""
        parts = []
        if self.notes:
            parts.append(read_phrase(self.notes, sum(g["lines"] for g in self.read)))
        if self.lost:
            parts.append("lost: " + "; ".join(self.lost))
        return "; ".join(parts)
