"""The exporter's ages by the log's clock for an old file (issue 31 item 8): a log whose newest
record is days old says days, not the seconds since specwatch read it."""

from __future__ import annotations

import time

import pytest
from _export_util import SAMPLES, Running, one

from tui.core.pipeline.follow import Followed
from tui.core.pipeline.logclock import local_naive
from tui.core.pipeline.whole import summarize_file
from tui.core.sources.base import LineBatch


async def test_an_old_file_is_as_old_as_its_newest_record() -> None:
    name = "ab_a.log"
    ref = summarize_file(str(SAMPLES / name), name, workers=1).stats
    newest = ref.current.all.last_ts
    assert newest is not None and local_naive(time.time()) - newest > 3600  # the sample is old
    async with Running([str(SAMPLES / name)], segments=10) as run:
        await run.wait_records([ref.records])
        got = await run.scrape()
    want = local_naive(time.time()) - newest
    base = {"source": name, "host": "box1"}
    assert one(got, "specwatch_source_last_record_age_seconds", **base) == pytest.approx(want, abs=120)
    lab = {**base, "segment": str(ref.current.index), "rank": "all", "current": "true"}
    assert one(got, "specwatch_last_record_age_seconds", **lab) == pytest.approx(want, abs=120)


def test_a_live_record_counts_from_its_arrival_and_a_wrong_clock_is_not_trusted() -> None:
    def line(ts: float) -> str:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ts))
        return f"[{stamp} TP0] Decode batch, #running-req: 1, #token: 10, token usage: 0.01, accept len: 2.00"

    now = local_naive(time.time())
    f = Followed("x", track_arrivals=True)
    f.feed(LineBatch("x", [line(now - 1)], [0], 1))
    assert f.age(None, time.monotonic()) == pytest.approx(1, abs=30)
    ahead = Followed("y", track_arrivals=True)  # stamped a day in the future: another zone
    ahead.feed(LineBatch("y", [line(now + 86400)], [0], 1))
    assert ahead.clock.skew is not None
    assert ahead.age(None, time.monotonic() + 5) == pytest.approx(5, abs=1)
