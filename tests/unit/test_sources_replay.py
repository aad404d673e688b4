"""Replay: pacing from line timestamps on a fake clock (no sleeping), speed, pause, step, seek and
segment jumps."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from _ci import missing
from _sources_util import Collector

from tui.core.formats import LineParser
from tui.core.sources.base import EventKind as K
from tui.core.sources.base import LineBatch
from tui.core.sources.clock import FakeClock
from tui.core.sources.file import FileSource
from tui.core.sources.replay import ReplaySource
from tui.core.sources.replay_index import SegmentIndex
from tui.core.stats import SourceStats

ROOT = Path(__file__).parent.resolve().parents[1]
T0 = "2026-01-02 03:04:"


def dec(sec: int, n: int) -> str:
    """An SGLang decode line at second ``sec``; ``n`` (as #running-req) numbers it."""
    return (
        f"[{T0}{sec:02d} TP0] Decode batch, #running-req: {n}, #token: 10, token usage: 0.01, "
        f"accept len: 2.00, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 10.00, #queue-req: 0"
    )


def args(sec: int, steps: int) -> str:
    return f"[{T0}{sec:02d}] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', speculative_num_steps={steps})"


def write(tmp_path, lines: list[str]) -> str:
    p = tmp_path / "r.log"
    p.write_text("\n".join(lines) + "\n")
    return str(p)


async def settle() -> None:
    """Let the replay run until it blocks (on the clock or on a control)."""
    for _ in range(200):
        await asyncio.sleep(0)


def emitted(c: Collector) -> list[str]:
    out = c.stream()
    c.items.clear()
    return out


LOG = [
    args(0, 3),
    dec(1, 1),
    dec(2, 2),
    "a line without a timestamp",
    dec(2, 3),
    dec(5, 4),
    args(10, 5),
    dec(11, 5),
    dec(12, 6),
]


async def test_original_pacing_at_speed_one(tmp_path):
    clock = FakeClock()
    async with Collector(ReplaySource(write(tmp_path, LOG), speed=1.0, clock=clock)) as c:
        await settle()
        assert emitted(c) == ["<opened>", LOG[0]]
        assert clock.next_deadline == pytest.approx(1.0)
        clock.advance(0.999)
        await settle()
        assert emitted(c) == []
        clock.advance(0.001)
        await settle()
        assert emitted(c) == [LOG[1]]
        clock.advance(1.0)  # t=2: the line at 2 s, the one without a timestamp and the next at 2 s
        await settle()
        assert emitted(c) == LOG[2:5]
        clock.advance(2.9)
        await settle()
        assert emitted(c) == []
        clock.advance(0.1)
        await settle()
        assert emitted(c) == [LOG[5]]
        clock.advance(6.0)  # t=11: the restart at 10 s and the line at 11 s
        await settle()
        assert emitted(c) == LOG[6:8]
        clock.advance(1.0)
        await settle()
        assert emitted(c) == [LOG[8], "<eof>"]
        assert c.done


async def test_lines_due_together_come_in_one_batch(tmp_path):
    lines = [dec(1, i) for i in range(500)] + [dec(3, 500)]
    clock = FakeClock()
    async with Collector(ReplaySource(write(tmp_path, lines), speed=1.0, clock=clock)) as c:
        await settle()
        batches = [b for b in c.items if isinstance(b, LineBatch)]
        assert [len(b) for b in batches] == [500]


async def test_speed_factor_and_change_of_speed(tmp_path):
    clock = FakeClock()
    src = ReplaySource(write(tmp_path, LOG), speed=2.0, clock=clock)
    async with Collector(src) as c:
        await settle()
        assert clock.next_deadline == pytest.approx(0.5)  # 1 s of log at 2x
        clock.advance(0.5)
        await settle()
        assert emitted(c)[-1] == LOG[1]
        clock.advance(0.25)  # log time 1.5 s; at 2x the next line (2 s) is due at 1.0
        src.set_speed(0.5)  # from log 1.5 s on, half speed: 0.5 s of log take 1 s
        await settle()
        assert clock.next_deadline == pytest.approx(0.75 + 1.0)
        clock.advance(1.0)
        await settle()
        assert emitted(c) == LOG[2:5]


async def test_pause_resume_and_step(tmp_path):
    clock = FakeClock()
    src = ReplaySource(write(tmp_path, LOG), speed=1.0, clock=clock)
    async with Collector(src) as c:
        await settle()
        emitted(c)
        clock.advance(0.4)
        src.pause()
        clock.advance(100.0)  # paused: time passes, nothing comes
        await settle()
        assert emitted(c) == [] and src.paused
        src.resume()  # 0.6 s of log left before the line at 1 s
        await settle()
        assert clock.next_deadline == pytest.approx(100.4 + 0.6)
        src.step()  # one line, and stay paused
        await settle()
        assert emitted(c) == [LOG[1]] and src.paused
        src.step(2)
        await settle()
        assert emitted(c) == LOG[2:4]
        src.step(until=lambda line: "Decode batch" in line)  # to the next metric line
        await settle()
        assert emitted(c) == [LOG[4]]
        clock.advance(1000.0)
        await settle()
        assert emitted(c) == [] and src.line_no == 6


async def test_max_speed_emits_everything_without_the_clock(tmp_path):
    clock = FakeClock()
    lines = [dec(i % 60, i) for i in range(30_000)]
    async with Collector(ReplaySource(write(tmp_path, lines), speed=None, clock=clock)) as c:
        await c.wait_for(lambda c: c.done)
    assert c.lines == lines and clock.time == 0.0
    batches = [b for b in c.items if isinstance(b, LineBatch)]
    assert len(batches) <= 10  # chunked, not one message per line
    assert c.kinds == [K.OPENED, K.EOF]


async def test_backward_clock_does_not_wait_and_max_gap_caps_waits(tmp_path):
    lines = [dec(30, 1), dec(10, 2), dec(11, 3), dec(59, 4)]
    clock = FakeClock()
    async with Collector(ReplaySource(write(tmp_path, lines), speed=1.0, clock=clock, max_gap=5.0)) as c:
        await settle()
        assert emitted(c) == ["<opened>"] + lines[:2]  # 30 s then 10 s: at once
        clock.advance(1.0)
        await settle()
        assert emitted(c) == [lines[2]]
        assert clock.next_deadline == pytest.approx(1.0 + 5.0)  # a 48 s gap waits 5 s
        clock.advance(5.0)
        await settle()
        assert emitted(c) == [lines[3], "<eof>"]


async def test_a_capped_gap_survives_a_pause_without_a_burst(tmp_path):
    lines = [dec(10, 1), dec(50, 2), dec(51, 3)]
    clock = FakeClock()
    src = ReplaySource(write(tmp_path, lines), speed=1.0, clock=clock, max_gap=5.0)
    async with Collector(src) as c:
        await settle()
        assert emitted(c) == ["<opened>", lines[0]] and clock.next_deadline == pytest.approx(5.0)
        clock.advance(1.0)
        src.pause()  # 1 s into the (capped) 5 s gap
        clock.advance(100.0)
        src.resume()
        await settle()
        assert emitted(c) == [] and clock.next_deadline == pytest.approx(105.0)  # the 4 s left
        clock.advance(4.0)
        await settle()
        assert emitted(c) == [lines[1]] and clock.next_deadline == pytest.approx(106.0)


async def test_vllm_year_rollover_pacing(tmp_path):
    lines = [
        "INFO 12-31 23:59:58 [loggers.py:1] SpecDecoding metrics: Mean acceptance length: 2.00",
        "INFO 01-01 00:00:01 [loggers.py:1] SpecDecoding metrics: Mean acceptance length: 2.10",
    ]
    clock = FakeClock()
    async with Collector(ReplaySource(write(tmp_path, lines), speed=1.0, clock=clock)) as c:
        await settle()
        assert emitted(c) == ["<opened>", lines[0]]
        assert clock.next_deadline == pytest.approx(3.0)  # across the new year: 3 s, not -1 year
        clock.advance(3.0)
        await settle()
        assert emitted(c) == [lines[1], "<eof>"]


async def test_docker_prefix_pacing_with_fractions(tmp_path):
    lines = [
        "2026-05-12T07:51:39.250000000Z (APIServer pid=1) INFO 05-12 07:51:39 [x.py:1] a",
        "2026-05-12T07:51:39.750000000Z (APIServer pid=1) INFO 05-12 07:51:39 [x.py:1] b",
    ]
    clock = FakeClock()
    async with Collector(ReplaySource(write(tmp_path, lines), speed=1.0, clock=clock)) as c:
        await settle()
        assert emitted(c) == ["<opened>", lines[0]]
        assert clock.next_deadline == pytest.approx(0.5)


async def test_seek_forward_emits_the_lines_passed_and_backward_resets(tmp_path):
    clock = FakeClock()
    src = ReplaySource(write(tmp_path, LOG), speed=1.0, clock=clock)
    async with Collector(src) as c:
        await settle()
        emitted(c)
        src.seek(1767323045.0)  # 03:04:05 -> the line at 5 s is next
        await settle()
        out = emitted(c)
        assert out == ["<seek>"] + LOG[1:5] + [LOG[5]]  # the target line plays at once after the jump
        src.pause()
        src.seek(1767323042.0)  # back to 03:04:02
        await settle()
        seek = [b for b in c.items if not isinstance(b, LineBatch)]
        assert seek[0].kind == K.SEEK and seek[0].data["reset"] is True
        assert emitted(c) == ["<seek>"] + LOG[:2]
        assert src.line_no == 3 and src.position == 1767323041.0


async def test_next_and_previous_segment(tmp_path):
    clock = FakeClock()
    src = ReplaySource(write(tmp_path, LOG), speed=1.0, clock=clock, paused=True, stay_open=True)
    async with Collector(src) as c:
        await settle()
        assert emitted(c) == ["<opened>"]
        src.next_segment()  # segment 1 starts at the second server_args (line 7)
        await settle()
        assert emitted(c) == ["<seek>"] + LOG[:6] and src.line_no == 7
        assert c.items == []
        src.next_segment()  # there is no segment 2: nothing happens
        await settle()
        assert emitted(c) == [] and src.line_no == 7
        src.prev_segment()  # from the start of segment 1 back to segment 0
        await settle()
        assert emitted(c) == ["<seek>"] and src.line_no == 1
        src.step(8)
        await settle()
        assert emitted(c) == LOG[:8]
        src.prev_segment()  # inside segment 1: back to segment 0's start
        await settle()
        assert emitted(c) == ["<seek>"] and src.line_no == 1


async def test_segment_starts_agree_with_the_statistics():
    """The replay index opens segments exactly where SourceStats does, on a sample log."""
    path = ROOT / "sample_logs" / "sglang_eagle3_restart.log"
    if not path.exists():
        missing("sample logs not generated")
    index = SegmentIndex(str(path))
    try:
        await index.scan_all()
    finally:
        index.close()
    parser, stats = LineParser("x"), SourceStats("x")
    async for b in FileSource(str(path), follow=False, idle_after=None):
        if isinstance(b, LineBatch):
            stats.feed(parser.feed_batch(b))
    expected = [s.start_line for s in list(stats.segments)[1:]]
    assert expected and index.start_lines[1:] == expected


async def test_missing_file_is_a_fatal_error(tmp_path):
    src = ReplaySource(str(tmp_path / "nope.log"), clock=FakeClock())
    async with Collector(src) as c:
        await c.wait_for(lambda c: c.done)
    assert c.kinds == [K.ERROR] and "no such file" in src.error


def test_bad_speed_is_refused():
    with pytest.raises(ValueError, match="speed"):
        ReplaySource("x.log", speed=0)
