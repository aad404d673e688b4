"""A local file followed as a chain of generations (issue 29 item 1): rotations the follower did
not see one by one (several between two looks, one of them compressed) are read in order from
the rotated set; a generation deleted unseen is named as lost. The rotations happen between two
of the follower's looks: the test's own code runs in the event loop, so the follower looks only
when the test awaits."""

from __future__ import annotations

import asyncio
import gzip
import os
import time
from pathlib import Path

from _sources_util import FAST, Collector, append, seq, seq_lines
from _wait import wait_until_async

from tui.core.sources.base import EventKind as K
from tui.core.sources.file import FileSource


def rotate(d: Path, compress: bool = True) -> None:
    """logrotate: .N -> .N+1 from the highest, srv.log -> .1, a new srv.log; .2 gzipped."""
    nums = sorted((int(p.name.split(".")[2]), p) for p in d.glob("srv.log.*"))
    for n, p in reversed(nums):
        os.rename(p, d / p.name.replace(f".{n}", f".{n + 1}", 1))
    os.rename(d / "srv.log", d / "srv.log.1")
    (d / "srv.log").touch()
    two = d / "srv.log.2"
    if compress and two.exists():
        (d / "srv.log.2.gz").write_bytes(gzip.compress(two.read_bytes()))
        two.unlink()


async def test_rotations_between_two_looks_are_all_read_in_order(tmp_path):
    p = tmp_path / "srv.log"
    append(p, seq_lines(1, 100))
    async with Collector(FileSource(str(p), **FAST)) as c:
        await c.wait_lines(100)
        append(p, seq_lines(101, 110))  # the rest of the file being read
        for k in range(4):  # four generations, each rotated away before the follower looks
            rotate(tmp_path)
            append(p, seq_lines(111 + 30 * k, 140 + 30 * k))
        await c.wait_lines(230)
        append(p, seq_lines(231, 240))
        await c.wait_lines(240)
    assert c.lines == [seq(i) for i in range(1, 241)]
    (ev,) = [e for e in c.events if e.kind == K.ROTATED]
    got = [
        (os.path.basename(g["path"]), g["from"], g["lines"], g["compression"]) for g in ev.data["generations"]
    ]
    assert got == [
        ("srv.log.3.gz", 0, 30, "gzip"),
        ("srv.log.2.gz", 0, 30, "gzip"),
        ("srv.log.1", 0, 30, None),
    ]
    assert ev.data["old_rest"] == "read" and ev.data["lost_generations"] == 0 and not ev.data["lost"]


async def test_a_generation_deleted_unseen_is_named_as_lost(tmp_path):
    p = tmp_path / "srv.log"
    append(p, seq_lines(1, 100))
    async with Collector(FileSource(str(p), **FAST)) as c:
        await c.wait_lines(100)
        for k in range(4):
            rotate(tmp_path, compress=False)
            append(p, seq_lines(101 + 30 * k, 130 + 30 * k))
        (tmp_path / "srv.log.2").unlink()  # lines 131-160, never seen
        await c.wait_lines(190)
        append(p, seq_lines(221, 230))
        await c.wait_lines(200)
    assert c.lines == [seq(i) for i in range(1, 131)] + [seq(i) for i in range(161, 231)]
    (ev,) = [e for e in c.events if e.kind == K.ROTATED]
    assert ev.data["lost_generations"] == 1 and "no srv.log.2 between srv.log.4 and srv.log" in ev.message
    assert "(1 generation lost)" in ev.message


async def test_a_writer_rotating_every_fifth_of_a_second_loses_nothing(tmp_path):
    """A writer in a thread: 200 lines a second, rotating (and gzipping .2) every 0.2 s for 5 s (the
    pace check: the follower holds the old file open, so it kept up before the chain too)."""
    p = tmp_path / "srv.log"
    append(p, seq_lines(1, 10))
    n = [10]

    def writer() -> None:
        end = time.monotonic() + 5.0
        next_rotation = time.monotonic() + 0.2
        while time.monotonic() < end:
            append(p, seq_lines(n[0] + 1, n[0] + 4))
            n[0] += 4
            if time.monotonic() >= next_rotation:
                rotate(tmp_path)
                next_rotation += 0.2
            time.sleep(0.02)  # pacing: lines between rotations
        append(p, "end\n")

    async with Collector(FileSource(str(p), **FAST)) as c:
        await c.wait_lines(10)
        await asyncio.to_thread(writer)
        await c.wait_for(lambda c: "end" in c.lines, "the end line")
    assert c.lines == [seq(i) for i in range(1, n[0] + 1)] + ["end"]
    assert all(not e.data.get("lost") for e in c.events if e.kind == K.ROTATED)


async def test_the_new_file_rotated_and_compressed_while_the_old_one_is_finished_is_read_once(tmp_path):
    """The follower has opened the new file B and is finishing the old one A (``settle``) when
    two more rotations move B to ``srv.log.2.gz`` (a copy under another inode) and C to
    ``srv.log.1``: the catch-up knows B's copy by its first bytes and reads neither it nor C
    (newer than B) before B itself; B is followed, then C is read at the next switch. Before,
    C's lines came before B's and B's twice."""
    p = tmp_path / "srv.log"
    append(p, seq_lines(1, 10))
    src = FileSource(str(p), **{**FAST, "settle": 0.5})
    async with Collector(src) as c:
        await c.wait_lines(10)
        rotate(tmp_path)  # A -> .1, B at the name
        append(p, seq_lines(11, 20))
        await wait_until_async(lambda: src._pending is not None)  # B opened, A being finished
        rotate(tmp_path)  # A -> .2.gz, B -> .1, C at the name
        append(p, seq_lines(21, 30))
        rotate(tmp_path)  # A -> .3.gz, B -> .2.gz, C -> .1, D at the name
        append(p, seq_lines(31, 40))
        await c.wait_lines(40)
        append(p, seq_lines(41, 45))
        await c.wait_lines(45)
    assert c.lines == [seq(i) for i in range(1, 46)]
    rotated = [e for e in c.events if e.kind == K.ROTATED]
    read = [[os.path.basename(g["path"]) for g in e.data["generations"]] for e in rotated]
    assert read == [[], ["srv.log.1"]]
