"""Segments follow the server, not the file; "idle for" counts by the log's own clock.

A truncation (copytruncate), a rotation or a glob switch is an event (chart mark, log tail,
JSONL) that keeps the segment and its config; a startup in the new content (server_args) opens
exactly one segment; ``n`` (restarted) still opens one. The idle / last-line age is read off the
newest line's timestamp when it has a date and the clocks agree, else counted from its arrival.
"""

from __future__ import annotations

import time

from _segments_util import ARGS, batch, dec, ev, stamp

from tui.core.pipeline.follow import Followed
from tui.core.pipeline.logclock import LogClock, duration, local_naive
from tui.core.sources.base import EventKind
from tui.panes.state import PaneState


def started() -> PaneState:
    st = PaneState("x")
    st.on_event(ev(EventKind.OPENED, size=10_000))
    st.feed_lines(batch([ARGS, *(dec(i) for i in range(1, 6))]))
    assert [s.index for s in st.stats.segments] == [0]
    assert st.stats.current.records == 5 and st.stats.current.config.speculative
    return st


def test_copytruncate_without_restart_keeps_the_segment_its_n_and_config():
    st = started()
    label = st.stats.current.config.label()
    st.take_notices()
    st.on_event(ev(EventKind.TRUNCATED, old_size=10_000))
    st.feed_lines(batch([dec(i) for i in range(6, 9)]))
    assert [s.index for s in st.stats.segments] == [0]
    seg = st.stats.current
    assert seg.records == 8 and seg.all.accept_len.n == 8  # n carries on
    assert seg.reason == "server_args" and seg.config.label() == label != "config unknown"
    assert [i for _, i in st.boundaries] == []  # no segment boundary on the chart
    assert st.file_marks[-1] == (5, "truncated")  # a mark after record 5
    assert any(r.kind == "event" and r.text.startswith("── truncated") for r in st.raw)
    assert not [n for n in st.take_notices() if "new segment" in n.title]


def test_rotation_whose_new_file_starts_with_server_args_opens_exactly_one_segment():
    st = started()
    st.on_event(ev(EventKind.ROTATED))
    st.feed_lines(batch([ARGS, ARGS, *(dec(i) for i in range(6, 9))]))  # the startup repeats its dump
    assert [(s.index, s.reason, s.records) for s in st.stats.segments] == [
        (0, "server_args", 5),
        (1, "server_args", 3),
    ]
    assert [i for _, i in st.boundaries] == [1]
    assert [m for _, m in st.file_marks] == ["rotated"]
    titles = [n.title for n in st.take_notices()]
    assert titles.count("x: new segment 1") == 1


def test_glob_switch_is_a_mark_naming_the_file_and_keeps_the_segment():
    st = started()
    st.on_event(ev(EventKind.SWITCHED, path="/logs/b.log"))
    st.feed_lines(batch([dec(i) for i in range(6, 8)]))
    assert [s.index for s in st.stats.segments] == [0] and st.stats.current.records == 7
    assert list(st.file_marks) == [(5, "switched to b.log")]


def test_n_still_opens_one_segment_and_twice_without_records_is_still_one():
    st = started()
    st.mark_restart()
    st.mark_restart()
    st.feed_lines(batch([dec(i) for i in range(6, 8)]))
    assert [(s.index, s.reason, s.records) for s in st.stats.segments] == [
        (0, "server_args", 5),
        (1, "restarted", 2),
    ]
    assert [i for _, i in st.boundaries] == [1]
    assert not st.file_marks


def test_headless_follow_agrees_truncation_keeps_a_startup_opens():
    f = Followed("x")
    f.feed(ev(EventKind.OPENED, size=0))
    f.feed(batch([ARGS, dec(1), dec(2)]))
    f.feed(ev(EventKind.TRUNCATED))
    out = f.feed(batch([dec(3)]))
    assert [seg for _, seg in out] == [0] and f.stats.current.records == 3
    f.feed(ev(EventKind.SWITCHED, path="/logs/b.log"))
    out = f.feed(batch([ARGS, dec(4)]))
    assert [seg for _, seg in out] == [1, 1]
    assert [e.kind for e in f.stats.events] == [EventKind.OPENED, EventKind.TRUNCATED, EventKind.SWITCHED]


# -- idle by the log's clock -----------------------------------------------------------------------


def opened_old_file(age: float) -> tuple[PaneState, float, float]:
    """A pane that opened a file whose last line was written ``age`` seconds ago."""
    wall, mono = time.time(), time.monotonic()
    lines = [dec(i, stamp(wall - age - 3 + i)) for i in range(1, 4)]
    st = PaneState("x")
    st.on_event(ev(EventKind.OPENED, size=sum(len(x) + 1 for x in lines)))
    st.feed_lines(batch(lines))
    return st, mono, wall


def test_an_old_file_says_its_age_by_the_logs_clock():
    st, mono, wall = opened_old_file(9 * 60)
    assert st.status_text(now=mono + 2, wall=wall + 2) == "live (last line 9 min ago, by the log's clock)"
    st.on_event(ev(EventKind.IDLE, seconds=30))
    assert st.status_text(now=mono + 80, wall=wall + 80) == "idle for 10 min, by the log's clock"
    st, mono, wall = opened_old_file(10 * 86400)
    assert st.status_text(now=mono + 7, wall=wall + 7) == "live (last line 10 d ago, by the log's clock)"


def test_a_line_written_now_reads_live_and_idles_by_its_stamp():
    wall, mono = time.time(), time.monotonic()
    st = PaneState("x")
    st.on_event(ev(EventKind.OPENED, size=0))
    st.feed_lines(batch([dec(1, stamp(wall))]))
    assert st.clock.skew is None and st.clock.last_ts is not None
    assert st.status_text(now=mono + 1, wall=wall + 1) == "live"
    st.on_event(ev(EventKind.IDLE, seconds=30))
    assert st.status_text(now=mono + 42, wall=wall + 42) in ("idle for 42 s", "idle for 43 s")


def test_future_stamps_fall_back_to_arrival_and_say_so():
    wall = time.time()
    st = PaneState("x")
    st.on_event(ev(EventKind.OPENED, size=10_000))
    st.feed_lines(batch([dec(1, stamp(wall + 3 * 3600))]))
    st.on_event(ev(EventKind.IDLE, seconds=30))
    now = st.last_data
    assert now is not None
    assert (
        st.status_text(now=now + 42, wall=wall + 42)
        == "idle for 42 s, by arrival: the log's clock is 3 h ahead"
    )


def test_live_lines_from_another_time_zone_count_from_arrival():
    wall = time.time()
    old = [dec(1, stamp(wall - 5 * 3600))]
    st = PaneState("x")
    st.on_event(ev(EventKind.OPENED, size=len(old[0]) + 1))
    st.feed_lines(batch(old))  # the backlog: as old as it says
    assert st.clock.age(wall) is not None
    st.feed_lines(batch([dec(2, stamp(wall - 5 * 3600))], first=2, offset=len(old[0]) + 1))  # written now
    assert st.clock.age(wall) is None and st.clock.skew is not None and st.clock.skew > 4 * 3600
    now = st.last_data
    assert now is not None
    assert st.status_text(now=now + 7, wall=wall + 7) == (
        "live (last line 7 s ago, by arrival: the log's clock is 5 h behind)"
    )


def test_no_date_means_arrival_time():
    wall = time.time()
    st = PaneState("x")
    st.on_event(ev(EventKind.OPENED, size=10_000))
    st.feed_lines(
        batch(["[04:40:55 TP0] Decode batch, #running-req: 1, accept len: 2.00"])
    )  # time of day only
    assert st.clock.last_ts is None
    now = st.last_data
    assert now is not None
    assert st.status_text(now=now + 8, wall=wall + 8) == "live (last line 8 s ago)"


def test_the_newest_batch_decides_a_batch_without_stamps_is_counted_by_arrival():
    c = LogClock()
    wall, mono = time.time(), time.monotonic()
    c.opened(None, mono)
    c.observe(batch([dec(1, stamp(wall - 600))]), wall, mono)
    age = c.age(wall)
    assert age is not None and 599 <= age <= 601
    c.observe(batch(["Traceback (most recent call last):"]), wall + 1, mono + 1)
    assert c.age(wall + 1) is None and c.skew is None


def test_local_naive_matches_printed_local_time_and_durations():
    wall = time.time()
    from tui.core.formats.timestamps import TimestampReader

    ts = TimestampReader().read(f"[{stamp(wall)} TP0] x")
    assert ts is not None and abs(local_naive(wall) - ts) < 1.0
    assert [duration(s) for s in (0, 42, 119, 120, 540, 7199, 7200, 86400 * 3)] == [
        "0 s",
        "42 s",
        "119 s",
        "2 min",
        "9 min",
        "119 min",
        "2 h",
        "3 d",
    ]
