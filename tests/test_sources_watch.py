"""The file watcher: inotify read on the event loop (no thread), one watch shared by many
followers, bursts of writes coalesced into one wake-up."""

from __future__ import annotations

import asyncio
import os
import threading

from _ci import missing
from _sources_util import FAST, append, collecting, seq_lines

from tui.core.sources.file import FileSource
from tui.core.sources.watch import Waker, _inotify_for, inotify_available


def _need_inotify() -> None:
    if not inotify_available():
        missing("inotify not available")


async def test_waker_wakes_on_a_write_and_coalesces_a_burst(tmp_path):
    _need_inotify()
    p = tmp_path / "a.log"
    p.write_text("")
    w = Waker(interested=lambda path: path == str(p), min_gap=0.2)
    assert w.subscribe(str(tmp_path)) and w.watching
    threads = threading.active_count()
    with open(p, "a") as f:
        f.write("one\n")
        f.flush()
        changed = await w.wait(5.0)
        assert str(p) in changed and w.wakes == 1
        for i in range(200):  # a burst: one write each
            f.write(f"line {i}\n")
            f.flush()
            await asyncio.sleep(0)
    changed = await w.wait(5.0)
    assert str(p) in changed
    await asyncio.sleep(0.3)
    assert w.wakes == 2  # 200 writes, one wake-up (the gap after the first one)
    assert threading.active_count() == threads  # nothing runs in a thread
    w.unsubscribe_all()
    assert not w.watching


async def test_followers_of_one_directory_share_a_watch_and_wake_only_for_their_file(tmp_path):
    _need_inotify()
    paths = [tmp_path / f"s{i}.log" for i in range(4)]
    for p in paths:
        p.write_text("")
    opts = dict(FAST, use_inotify=True, safety_interval=30.0)
    sources = [FileSource(str(p), **opts) for p in paths]
    async with collecting(sources) as collectors:
        ino = _inotify_for(asyncio.get_running_loop())
        await asyncio.sleep(0.2)
        assert list(ino.dirs) == [str(tmp_path)]  # one watch for four followers
        assert len(ino.subscribers[str(tmp_path)]) == 4
        before = [s.waker.wakes for s in sources]
        append(paths[2], seq_lines(1, 3))
        await collectors[2].wait_lines(3)
        await asyncio.sleep(0.2)
        after = [s.waker.wakes for s in sources]
        assert after[2] > before[2]
        assert [a - b for a, b in zip(after, before)][:2] == [0, 0] and after[3] == before[3]
    assert str(tmp_path) not in ino.dirs  # the last follower gone: the watch is removed


async def test_a_replaced_directory_is_watched_again(tmp_path):
    _need_inotify()
    d = tmp_path / "logs"
    d.mkdir()
    p = d / "a.log"
    p.write_text("")
    w = Waker(interested=lambda path: True, min_gap=0.0)
    assert w.subscribe(str(d))
    os.rename(d, tmp_path / "old")
    d.mkdir()
    await w.wait(1.0)
    await asyncio.sleep(0.05)
    assert w.subscribe(str(d)) and w.watching
    p.write_text("x\n")
    assert await w.wait(5.0)
    w.unsubscribe_all()
