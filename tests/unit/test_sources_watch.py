"""The file watcher: inotify read on the event loop (no thread), one watch shared by many
followers, bursts of writes coalesced into one wake-up."""

from __future__ import annotations

import asyncio
import os
import threading

import pytest
from _ci import missing
from _sources_util import FAST, append, collecting, events_read, seq_lines
from _wait import DEADLINE, wait_until_async

from tui.core.sources import wakeups
from tui.core.sources.aio import wait_for as aio_wait_for
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


def no_wake_pending(w: Waker) -> bool:
    return w._timer is None and not w.event.is_set()


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
    await events_read(tmp_path)  # every write's events are in: none woke it again
    assert w.wakes == 2 and no_wake_pending(w)  # 200 writes, one wake-up (the gap after the first one)
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
        await wait_until_async(lambda: len(ino.subscribers.get(str(tmp_path), ())) == 4, what="4 followers")
        assert list(ino.dirs) == [str(tmp_path)]  # one watch for four followers
        assert len(ino.subscribers[str(tmp_path)]) == 4
        before = [s.waker.wakes for s in sources]
        append(paths[2], seq_lines(1, 3))
        await collectors[2].wait_lines(3)
        await events_read(tmp_path)  # the write's events were handed to every follower by now
        after = [s.waker.wakes for s in sources]
        assert after[2] > before[2]
        assert [a - b for a, b in zip(after, before)][:2] == [0, 0] and after[3] == before[3]
        assert all(no_wake_pending(s.waker) for i, s in enumerate(sources) if i != 2)
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
    await events_read(tmp_path)  # the rename's events are read: the old watch is dropped
    assert w.subscribe(str(d)) and w.watching
    p.write_text("x\n")
    assert await w.wait(5.0)
    w.unsubscribe_all()


async def test_on_a_wake_grid_writes_are_read_at_the_next_point_in_one_wake_up(tmp_path, monkeypatch):
    """With a wake grid (the app's tick), many writes between two points wake a follower once: the
    descriptor is set aside until the next point and read there; a poll ends on a point too;
    without the grid, a write is read at once again."""
    _need_inotify()
    p = tmp_path / "a.log"
    p.write_text("")
    loop = asyncio.get_running_loop()
    period = 0.25  # the app's tick
    timeouts: list[tuple[float, float]] = []  # (loop time, timeout) of each wait on the event

    async def recorded(aw, timeout):
        timeouts.append((loop.time(), timeout))
        return await aio_wait_for(aw, timeout)

    monkeypatch.setattr(wakeups, "wait_for", recorded)
    set_wake_grid(period)
    try:
        w = Waker(interested=lambda path: path == str(p), min_gap=0.0)
        assert w.subscribe(str(tmp_path))
        ino = _inotify_for(loop)
        at_points = [0]  # reads made when a set-aside descriptor is released at a grid point
        release = ino._release

        def counted_release() -> None:
            before = ino.reads
            release()
            at_points[0] += ino.reads - before

        monkeypatch.setattr(ino, "_release", counted_release)
        await w.wait(period)  # now just after a grid point
        reads = ino.reads
        with open(p, "a") as f:
            for i in range(30):  # each write gets a turn of the loop (one wake-up each without the grid)
                f.write(f"line {i}\n")
                f.flush()
                await asyncio.sleep(0)
        changed = await w.wait(DEADLINE)
        await events_read(tmp_path)
        assert (
            str(p) in changed and w.wakes <= 2
        )  # thirty writes, one wake-up (two if they straddled a point)
        assert 1 <= ino.reads - reads <= 3  # the descriptor read once per point (and once for the mark)
        assert at_points[0] == ino.reads - reads  # every read on a grid point, none at a write
        await w.wait(0.0)  # the second wake-up of a straddled burst, if any
        timeouts.clear()
        assert await w.wait(0.05) == set()
        (now, timeout), *_ = timeouts
        ends = (now + timeout) / period
        assert timeout >= 0.05 and ends == pytest.approx(round(ends), abs=1e-3)  # on a point
    finally:
        set_wake_grid(None)
    assert next_grid_point(123.4) == 123.4
    reads, released = ino.reads, at_points[0]
    with open(p, "a") as f:
        f.write("prompt\n")
    assert str(p) in await w.wait(DEADLINE)
    assert ino.reads > reads and at_points[0] == released  # no grid: read at the write, not set aside
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
