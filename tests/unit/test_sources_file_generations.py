"""A local file followed as a chain of generations (issue 29 item 1): rotations the follower did
not see one by one (several between two looks, one of them compressed) are read in order from
the rotated set; a generation deleted unseen is named as lost. The rotations happen between two
of the follower's looks: the test's own code runs in the event loop, so the follower looks only
when the test awaits."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from _sources_util import FAST, Collector, append, seq, seq_lines

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
