"""Local files followed by name (tail -F) and globs, on real files in a temp dir.

Each scenario runs twice: with inotify wake-ups and with polling only.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _ci import missing
from _sources_util import FAST, Collector, FakeClock, Looks, append, seq, seq_lines

from tui.core.sources import file as file_source
from tui.core.sources.base import EventKind as K
from tui.core.sources.file import FileSource
from tui.core.sources.glob import GlobSource
from tui.core.sources.lines import END, StartAt
from tui.core.sources.wakeups import inotify_available

ROOT = Path(__file__).parent.resolve().parents[1]


@pytest.fixture(params=["inotify", "polling"])
def opts(request):
    if request.param == "inotify" and not inotify_available():
        missing("inotify not available")
    if request.param == "inotify":  # no safety poll within the test: only inotify can wake us
        return dict(FAST, use_inotify=True, safety_interval=30.0)
    return dict(FAST, use_inotify=False)


def expected(a: int, b: int) -> list[str]:
    return [seq(i) for i in range(a, b + 1)]


async def test_append_with_partial_line_offsets_and_numbers(tmp_path, opts):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 3))
    src = FileSource(str(p), **opts)
    looks = Looks(src)
    async with Collector(src) as c:
        await c.wait_lines(3)
        assert src.waker.watching == opts["use_inotify"]
        append(p, seq_lines(4, 5) + "line 000")  # the last line is partial: held back
        await c.wait_lines(5)
        await looks.caught_up()  # the partial line was read, and held
        assert len(c.lines) == 5
        append(p, "06\n" + seq_lines(7, 9))
        await c.wait_lines(9)
    assert c.lines == expected(1, 9)
    assert c.kinds == [K.OPENED]
    data = p.read_bytes()
    for no, off, text in c.numbered:
        assert data[off:].split(b"\n", 1)[0].decode() == text
        assert text == seq(no)


async def test_truncate_reads_again_from_the_start(tmp_path, opts):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 5))
    async with Collector(FileSource(str(p), **opts)) as c:
        await c.wait_lines(5)
        append(p, seq_lines(6, 7), mode="w")  # truncate + write, shorter than before
        await c.wait_lines(7)
        append(p, seq_lines(8, 8))
        await c.wait_lines(8)
    assert c.stream() == ["<opened>"] + expected(1, 5) + ["<truncated>"] + expected(6, 8)
    assert [no for no, _, _ in c.numbered] == [1, 2, 3, 4, 5, 1, 2, 3]


async def test_truncate_and_refill_longer_is_noticed(tmp_path, opts):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 3))
    async with Collector(FileSource(str(p), **opts)) as c:
        await c.wait_lines(3)
        with open(p, "r+") as f:  # in one go: the size never looks smaller than what was read
            f.truncate(0)
            f.write(seq_lines(4, 40))
        await c.wait_lines(40)
    assert c.lines == expected(1, 40)
    assert c.kinds == [K.OPENED, K.TRUNCATED]


async def test_rename_and_recreate_finishes_the_old_file(tmp_path, opts):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 5))
    async with Collector(FileSource(str(p), **opts)) as c:
        await c.wait_lines(5)
        with open(p, "a") as writer:  # a writer that still holds the old file
            os.rename(p, tmp_path / "a.log.1")
            writer.write(seq_lines(6, 7))
            writer.flush()
            append(p, seq_lines(8, 10))
        await c.wait_lines(10)
        append(p, seq_lines(11, 12))
        await c.wait_lines(12)
    assert c.stream() == ["<opened>"] + expected(1, 7) + ["<rotated>"] + expected(8, 12)
    rotated = c.events[1]
    assert rotated.path == str(p) and rotated.data["old_inode"] != rotated.data["inode"]


async def test_delete_waits_and_recreate_is_a_new_file(tmp_path, opts):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 3))
    async with Collector(FileSource(str(p), **opts)) as c:
        await c.wait_lines(3)
        p.unlink()
        await c.wait_event(K.WAITING)
        assert "waiting" in c.events[-1].message
        append(p, seq_lines(4, 6))
        await c.wait_lines(6)
    assert c.stream() == ["<opened>"] + expected(1, 3) + ["<waiting>", "<rotated>"] + expected(4, 6)


async def test_missing_file_waits_then_opens(tmp_path, opts):
    p = tmp_path / "later" / "a.log"  # not even the directory exists yet
    async with Collector(FileSource(str(p), **opts)) as c:
        await c.wait_event(K.WAITING)
        assert "does not exist" in c.events[0].message
        p.parent.mkdir()
        append(p, seq_lines(1, 2))
        await c.wait_lines(2)
        append(p, seq_lines(3, 4))
        await c.wait_lines(4)
    assert c.stream() == ["<waiting>", "<opened>"] + expected(1, 4)


async def test_symlink_follows_appends_and_a_repointed_link(tmp_path, opts):
    """``current.log -> runs/run1.log``: appends land in another directory; re-pointing the link
    (atomically) is a rotation."""
    runs = tmp_path / "runs"
    runs.mkdir()
    link = tmp_path / "current.log"
    append(runs / "run1.log", seq_lines(1, 2))
    link.symlink_to(runs / "run1.log")
    async with Collector(FileSource(str(link), **opts)) as c:
        await c.wait_lines(2)
        append(runs / "run1.log", seq_lines(3, 4))
        await c.wait_lines(4)
        append(runs / "run2.log", seq_lines(5, 6))
        (tmp_path / "tmp.link").symlink_to(runs / "run2.log")
        os.replace(tmp_path / "tmp.link", link)
        await c.wait_lines(6)
        append(runs / "run2.log", seq_lines(7, 7))
        await c.wait_lines(7)
    assert c.stream() == ["<opened>"] + expected(1, 4) + ["<rotated>"] + expected(5, 7)


async def test_from_end_and_last_n(tmp_path):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 10) + "line 000")  # a partial last line
    async with Collector(FileSource(str(p), start=END, **FAST)) as c:
        await c.wait_event(K.OPENED)
        append(p, "11\n" + seq_lines(12, 12))
        await c.wait_lines(2)
    assert c.numbered[0][0] == 11 and c.lines == expected(11, 12)
    async with Collector(FileSource(str(p), start=StartAt("last", 3), **FAST)) as c:
        await c.wait_lines(3)
    assert c.lines == expected(10, 12)
    assert [no for no, _, _ in c.numbered] == [10, 11, 12]
    assert c.events[0].data["offset"] == p.read_bytes().index(seq(10).encode())


async def test_no_follow_reads_to_eof_with_last_partial_line(tmp_path):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 3) + "tail without newline")
    async with Collector(FileSource(str(p), follow=False, **FAST)) as c:
        await c.wait_for(lambda c: c.done)
    assert c.stream() == ["<opened>"] + expected(1, 3) + ["tail without newline", "<eof>"]


async def test_no_follow_missing_file_is_a_fatal_error(tmp_path):
    src = FileSource(str(tmp_path / "nope.log"), follow=False, **FAST)
    async with Collector(src) as c:
        await c.wait_for(lambda c: c.done)
    assert c.kinds == [K.ERROR] and c.events[0].data["fatal"] is True
    assert src.error == f"no such file: {tmp_path / 'nope.log'}"


async def test_idle_is_said_once_per_quiet_spell(tmp_path, monkeypatch):
    clock = FakeClock()  # the follower's idle time is counted on a clock the test moves
    monkeypatch.setattr(file_source, "time", clock)
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 1))
    src = FileSource(str(p), **dict(FAST, idle_after=0.15))
    looks = Looks(src)
    async with Collector(src) as c:
        await c.wait_lines(1)
        clock.now += 0.2  # a quiet spell
        await c.wait_event(K.IDLE)
        clock.now += 0.2  # as long again, still quiet: nothing more to say
        await looks.caught_up()
        assert c.kinds.count(K.IDLE) == 1
        append(p, seq_lines(2, 2))
        await c.wait_lines(2)
        clock.now += 0.2  # the next quiet spell
        await c.wait_event(K.IDLE, 2)
    assert c.stream() == ["<opened>", seq(1), "<idle>", seq(2), "<idle>"]


# -- globs -------------------------------------------------------------------------------------


async def test_glob_switches_to_a_newer_file(tmp_path, opts):
    old = tmp_path / "run1.log"
    append(old, seq_lines(1, 3))
    src = GlobSource(str(tmp_path / "*.log"), **opts)
    looks = Looks(src)
    async with Collector(src) as c:
        await c.wait_lines(3)
        append(old, seq_lines(4, 5))
        new = tmp_path / "run2.log"
        append(new, seq_lines(6, 8))
        await c.wait_lines(8)
        append(new, seq_lines(9, 9))
        append(old, "not read: the old file is finished\n")  # the old one must not take over again
        await c.wait_lines(9)
        await looks.caught_up()
    assert c.stream() == ["<opened>"] + expected(1, 5) + ["<switched>"] + expected(6, 9)
    sw = c.events[1]
    assert sw.path == str(new) and "run2.log" in sw.message


async def test_glob_ignores_an_older_file_and_waits_when_nothing_matches(tmp_path, opts):
    src = GlobSource(str(tmp_path / "*.log"), **opts)
    looks = Looks(src)
    async with Collector(src) as c:
        await c.wait_event(K.WAITING)
        cur = tmp_path / "b.log"
        append(cur, seq_lines(1, 2))
        await c.wait_lines(2)
        old = tmp_path / "a.log"
        append(old, "an old log copied in\n")
        os.utime(old, (1_000_000, 1_000_000))
        append(cur, seq_lines(3, 3))
        await c.wait_lines(3)
        await looks.caught_up()
    assert c.stream() == ["<waiting>", "<opened>"] + expected(1, 3)


async def test_glob_rotation_of_the_current_name_is_a_rotation(tmp_path, opts):
    p = tmp_path / "server.log"
    append(p, seq_lines(1, 2))
    async with Collector(GlobSource(str(tmp_path / "server.log*"), **opts)) as c:
        await c.wait_lines(2)
        os.rename(p, tmp_path / "server.log.1")  # still matches, same file
        append(p, seq_lines(3, 4))
        await c.wait_lines(4)
    assert c.stream() == ["<opened>"] + expected(1, 2) + ["<rotated>"] + expected(3, 4)
