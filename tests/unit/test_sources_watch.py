"""The file watcher: inotify read on the event loop (no thread), one watch shared by many
followers, bursts of writes coalesced into one wake-up."""

from __future__ import annotations

import asyncio
import os
import threading

import pytest
from _ci import missing
from _sources_util import FAST, append, collecting, seq_lines

from tui.core.sources.file import FileSource
from tui.core.sources.wakeups import (
    Waker,
    _inotify_for,
    inotify_available,
    next_grid_point,
    set_wake_grid,
)


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


async def test_on_a_wake_grid_writes_are_read_at_the_next_point_in_one_wake_up(tmp_path):
    """With a wake grid (the app's tick), many writes between two points wake a follower once,
    at the point; a poll ends on a point too; without the grid, wake-ups are prompt again."""
    _need_inotify()
    p = tmp_path / "a.log"
    p.write_text("")
    loop = asyncio.get_running_loop()
    period = 0.4
    set_wake_grid(period)
    try:
        w = Waker(interested=lambda path: path == str(p), min_gap=0.0)
        assert w.subscribe(str(tmp_path))
        ino = _inotify_for(loop)
        await w.wait(period)  # now just after a grid point
        reads = ino.reads
        with open(p, "a") as f:
            for i in range(
                30
            ):  # writes spread over a quarter of a period (one wake-up each without the grid)
                f.write(f"line {i}\n")
                f.flush()
                await asyncio.sleep(period / 120)
        changed = await w.wait(5.0)
        woke = loop.time()
        await asyncio.sleep(period)  # a late loop may have let the writes straddle a point
        assert str(p) in changed and w.wakes <= 2  # thirty writes, one wake-up (two if straddled)
        assert ino.reads - reads <= 2  # the descriptor read once per point
        assert abs(woke - next_grid_point(woke - period / 2)) < 0.05  # on a point
        await w.wait(0.0)  # the second wake-up of a straddled burst, if any
        t0 = loop.time()
        assert await w.wait(0.05) == set()  # a poll of 0.05 s ends on the next point
        assert loop.time() - t0 > 0.05 and abs(loop.time() - next_grid_point(loop.time() - period / 2)) < 0.05
    finally:
        set_wake_grid(None)
    assert next_grid_point(123.4) == 123.4
    t0 = loop.time()
    with open(p, "a") as f:
        f.write("prompt\n")
    assert str(p) in await w.wait(5.0)
    assert loop.time() - t0 < period  # no grid: the write wakes it at once
    w.unsubscribe_all()


def test_wake_grid_points_and_bad_periods():
    set_wake_grid(0.25)
    try:
        assert next_grid_point(0.5) == 0.5
        assert abs(next_grid_point(0.51) - 0.75) < 1e-9
        assert abs(next_grid_point(10.1) - 10.25) < 1e-9
    finally:
        set_wake_grid(None)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            set_wake_grid(bad)
    assert next_grid_point(0.51) == 0.51  # a refused period leaves no grid
