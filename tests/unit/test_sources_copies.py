"""A local follower while the file changes under it: a copytruncate whose last lines only the
copy holds, and a rotation whose old file is still written. The follower is pulled by hand (a
source runs only when asked for its next batch), so each change lands exactly between two of
its steps, whatever the machine's speed."""

from __future__ import annotations

import os
import shutil

from _sources_util import FAST, append, seq, seq_lines

from tui.core.sources.base import EventKind as K
from tui.core.sources.base import LineBatch, SourceEvent
from tui.core.sources.copies import local_copies, read_copy
from tui.core.sources.file import FileSource
from tui.core.sources.identity import Fingerprint

OPTS = dict(FAST, use_inotify=False)


class Pull:
    """Pulls a source's batches one at a time."""

    def __init__(self, src) -> None:
        self.src = src
        self.it = src.__aiter__()
        self.items: list = []

    async def until(self, cond) -> None:
        while not cond(self):
            self.items.append(await self.it.__anext__())

    async def lines_up_to(self, n: int) -> None:
        await self.until(lambda p: len(p.lines) >= n)

    @property
    def lines(self) -> list[str]:
        return [x for b in self.items if isinstance(b, LineBatch) for x in b.lines]

    def events(self, kind: K) -> list[SourceEvent]:
        return [b for b in self.items if isinstance(b, SourceEvent) and b.kind == kind]

    def stream(self) -> list[str]:
        out: list[str] = []
        for b in self.items:
            out += b.lines if isinstance(b, LineBatch) else [f"<{b.kind.value}>"]
        return out


async def test_copytruncate_reads_the_unread_rest_from_the_copy_first(tmp_path):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 100))
    pull = Pull(FileSource(str(p), **OPTS))
    try:
        await pull.lines_up_to(100)
        append(p, seq_lines(101, 130) + "partial")  # not read yet, and a line still being written
        shutil.copy(p, tmp_path / "a.log.1")
        append(tmp_path / "a.log.2", seq_lines(2, 200))  # an older copy: other bytes
        os.truncate(p, 0)
        await pull.until(lambda p: p.events(K.TRUNCATED))
        append(p, "new 1\nnew 2\n")
        await pull.lines_up_to(133)
    finally:
        await pull.src.aclose()
    assert pull.stream() == ["<opened>"] + [seq(i) for i in range(1, 131)] + [
        "partial",
        "<truncated>",
        "new 1",
        "new 2",
    ]
    (ev,) = pull.events(K.TRUNCATED)
    end = 1100 + 330 + len("partial")
    assert ev.data["old_size"] == 1100 and ev.data["old_rest"] == "drain"
    assert (ev.data["rest_from"], ev.data["rest_to"], ev.data["rest_lines"]) == (1100, end, 31)
    assert f"its copy {tmp_path}/a.log.1 (bytes 1100 to {end}, 31 lines) first" in ev.message, ev.message
    assert "shrank to 0 bytes" in ev.message and "not read" not in ev.message


async def test_copytruncate_without_a_copy_says_what_was_not_read(tmp_path):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 100))
    pull = Pull(FileSource(str(p), **OPTS))
    try:
        await pull.lines_up_to(100)
        append(p, seq_lines(101, 130))
        append(tmp_path / "a.log.1", seq_lines(500, 700))  # long enough, but not a copy
        os.truncate(p, 0)
        await pull.until(lambda p: p.events(K.TRUNCATED))
    finally:
        await pull.src.aclose()
    assert pull.lines == [seq(i) for i in range(1, 101)]
    (ev,) = pull.events(K.TRUNCATED)
    assert ev.data["old_rest"] == "lost" and "rest_lines" not in ev.data
    assert "after byte 1100 before that was not read (no copy of it found)" in ev.message, ev.message


async def test_copy_read_to_the_end_already_holds_nothing_more(tmp_path):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 100))
    pull = Pull(FileSource(str(p), **OPTS))
    try:
        await pull.lines_up_to(100)
        shutil.copy(p, tmp_path / "a.log-20260601")
        os.truncate(p, 0)
        await pull.until(lambda p: p.events(K.TRUNCATED))
    finally:
        await pull.src.aclose()
    (ev,) = pull.events(K.TRUNCATED)
    assert ev.data["old_rest"] == "read" and "a.log-20260601 holds nothing more" in ev.message, ev.message


async def test_rotated_file_is_read_while_it_is_still_written(tmp_path):
    """Each late line is written while the follower waits for the old file to go quiet: it is
    read, however many come; the switch comes only after a settle time without one."""
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 10))
    pull = Pull(FileSource(str(p), **OPTS))
    try:
        await pull.lines_up_to(10)
        with open(p, "a") as writer:  # the program's descriptor stays on the renamed file
            os.rename(p, tmp_path / "a.log.1")
            append(p, "new 1\n")
            for i in range(11, 31):
                writer.write(seq(i) + "\n")
                writer.flush()
                await pull.lines_up_to(i)
        append(p, "new 2\n")
        await pull.lines_up_to(32)
    finally:
        await pull.src.aclose()
    assert pull.stream() == ["<opened>"] + [seq(i) for i in range(1, 31)] + ["<rotated>", "new 1", "new 2"]
    (ev,) = pull.events(K.ROTATED)
    assert ev.data["old_rest"] == "read" and ev.data["old_read_to"] == 330
    assert "the old one was read to its end (to byte 330, " in ev.message, ev.message


def test_local_copies_are_the_same_bytes_newest_first(tmp_path):
    p = tmp_path / "a.log"
    body = seq_lines(1, 100).encode()
    p.write_bytes(body)
    fp = Fingerprint()
    fp.feed(body)
    st = p.stat()
    (tmp_path / "a.log.1").write_bytes(body + b"more\n")
    (tmp_path / "a.log.2").write_bytes(b"x" * 2000)
    (tmp_path / "a.log.gz").write_bytes(b"short")  # shorter than what was read: not a candidate
    (tmp_path / "b.log.1").write_bytes(body)  # another name
    os.utime(tmp_path / "a.log.2", (1, 1))
    found = local_copies(str(p), (st.st_dev, st.st_ino), fp, len(body))
    assert [(os.path.basename(c.name or ""), c.same, c.size) for c in found] == [
        ("a.log.1", True, 1105),
        ("a.log.2", False, 2000),
    ]
    assert b"".join(read_copy(str(tmp_path / "a.log.1"), found[0].identity, len(body))) == b"more\n"
