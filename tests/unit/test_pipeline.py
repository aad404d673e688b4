"""One follow pipeline: every flow drives a source through :class:`Driver` (the headless follower,
the app's pane, the whole-file summary), the status of a source is mapped from its events in one
place (``pipeline/status.py``), and records enter the statistics one way
(``SourceStats.add_columns``, a precomputed reduction passed as an argument)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from _scan_util import same
from _segments_util import ARGS, batch, dec, ev

from tui.core.formats import LineParser
from tui.core.model.columns import RecordColumns
from tui.core.model.records import Record
from tui.core.pipeline.driver import Driver
from tui.core.pipeline.follow import Followed
from tui.core.pipeline.status import STATES, Change, Status, after_end, after_event, after_lines
from tui.core.pipeline.whole import Summarizer, summarize_stream
from tui.core.sources.base import EventKind, SourceEvent
from tui.core.stats import SourceStats
from tui.core.stats.precompute import precompute
from tui.panes.state import PaneState

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "sglang_eagle3_restart.log"


# -- the status mapping ------------------------------------------------------------------------
def test_status_names_are_the_enum_values():
    assert STATES == ("connecting", "live", "idle", "waiting", "reconnecting", "error", "ended")
    assert Status.IDLE == "idle"  # a str: shown and compared as its name


@pytest.mark.parametrize(
    ("kind", "data", "before", "want"),
    [
        (EventKind.OPENED, {}, Status.CONNECTING, Change(Status.LIVE, "m")),
        (EventKind.CONNECTED, {}, Status.RECONNECTING, Change(Status.LIVE, "m")),
        (EventKind.SEEK, {}, Status.ENDED, Change(Status.LIVE, "m")),
        (EventKind.IDLE, {}, Status.LIVE, Change(Status.IDLE, "m")),
        (EventKind.WAITING, {}, Status.LIVE, Change(Status.WAITING, "m")),
        (EventKind.RECONNECTING, {"attempt": 2}, Status.LIVE, Change(Status.RECONNECTING, "m")),
        (EventKind.ERROR, {}, Status.LIVE, Change(Status.ERROR, "m", fatal=False)),
        (EventKind.ERROR, {"fatal": True}, Status.LIVE, Change(Status.ERROR, "m", fatal=True)),
        (EventKind.EXITED, {"returncode": 2}, Status.LIVE, Change(Status.ERROR, "m", fatal=True)),
        (EventKind.EXITED, {"returncode": 0}, Status.LIVE, Change(Status.ENDED, "m")),
        (EventKind.EXITED, {"returncode": 0}, Status.ERROR, None),
        (EventKind.EOF, {}, Status.IDLE, Change(Status.ENDED, "m")),
        (EventKind.EOF, {}, Status.ERROR, None),
        (EventKind.TRUNCATED, {}, Status.LIVE, None),
        (EventKind.RESTARTED, {}, Status.IDLE, None),
        (EventKind.STDERR, {}, Status.LIVE, None),
    ],
)
def test_each_event_maps_to_one_status(kind, data, before, want):
    assert after_event(SourceEvent("s", kind, "m", data=data), before) == want


def test_lines_bring_a_source_back_unless_it_ended_or_failed_for_good():
    for status in (Status.CONNECTING, Status.IDLE, Status.WAITING, Status.RECONNECTING):
        assert after_lines(status, fatal=False) == Change(Status.LIVE, "")
    assert after_lines(Status.ERROR, fatal=False) == Change(Status.LIVE, "")
    assert after_lines(Status.ERROR, fatal=True) is None
    assert after_lines(Status.ENDED, fatal=False) is None
    assert after_lines(Status.LIVE, fatal=False) is None


def test_the_end_of_a_source():
    assert after_end(Status.LIVE, "", "gone", fatal=False) == Change(Status.ERROR, "gone", True)
    assert after_end(Status.LIVE, "eof", None, fatal=False) == Change(Status.ENDED, "eof")
    assert after_end(Status.ERROR, "bad", None, fatal=False) is None  # the error stays said
    assert after_end(Status.ERROR, "bad", "gone", fatal=True) is None


# -- one driver --------------------------------------------------------------------------------
STORY = [
    ev(EventKind.OPENED, size=0),
    batch([ARGS, dec(1), dec(2), "[2026-01-02 03:04:05 TP0] Decode batch, accept len: x"], 1),
    ev(EventKind.IDLE),
    batch([dec(3)], 5),
    ev(EventKind.ERROR),  # not fatal: data after it brings the source back
    batch([dec(4), dec(5)], 6),
    ev(EventKind.RESTARTED),
    batch([ARGS, dec(6)], 8),
    ev(EventKind.RECONNECTING, attempt=1),
    ev(EventKind.ERROR, fatal=True),
    batch([dec(7)], 10),  # after a fatal error: counted, the status stays
]


def fed(driver: Driver, end: str | None) -> Driver:
    for b in STORY:
        driver.feed(b)
    driver.finished(end)
    return driver


@pytest.mark.parametrize("end", [None, "gone"])
def test_the_follower_the_pane_and_the_bare_driver_agree(end):
    drivers = [fed(Driver("x"), end), fed(Followed("x"), end), fed(PaneState("x"), end)]
    want = drivers[0]
    assert (want.status, want.error, want.lines) == (Status.ERROR, "error happened", 10)
    assert want.stats.records == 7 and want.stats.malformed == 1 and len(want.stats.segments) == 2
    for d in drivers[1:]:
        assert (d.status, d.status_message, d.error, d.lines) == (
            want.status,
            want.status_message,
            want.error,
            want.lines,
        )
        assert d.stats.to_dict() == want.stats.to_dict()


def test_the_pane_keeps_what_it_adds_from_the_same_feed():
    st = fed(PaneState("x"), None)
    assert [p.seq for p in st.history] == list(range(1, 8))
    assert [p.segment for p in st.history] == [0] * 5 + [1, 1]
    assert [i for _, i in st.boundaries] == [1]
    tags = {r.line_no: r.kind for r in st.raw if r.line_no is not None}
    assert tags[1] == "marker" and tags[2] == "metric" and tags[4] == "malformed"
    titles = [n.title for n in st.take_notices()]
    assert "x: idle" in titles and "x: connection lost" in titles and titles.count("x: error") == 2


def test_status_messages_come_with_the_status():
    d = Driver("x")
    d.feed(ev(EventKind.WAITING))
    assert (d.status, d.status_message) == ("waiting", "waiting happened")
    d.feed(batch([dec(1)]))
    assert (d.status, d.status_message) == ("live", "")
    d.feed(ev(EventKind.EOF))
    assert (d.status, d.status_message) == ("ended", "eof happened")
    d.finished()
    assert (d.status, d.status_message, d.error) == ("ended", "eof happened", None)


def test_a_seek_back_gives_the_driver_new_statistics():
    d = Followed("x", track_arrivals=True)
    d.feed(batch([ARGS, dec(1), dec(2)]))
    assert d.stats.records == 2 and d.arrivals
    d.feed(SourceEvent("x", EventKind.SEEK, "", data={"reset": True}))
    assert d.stats.records == 0 and not d.arrivals and d.status == "live"


def test_whole_file_reading_is_a_mode_of_the_driver():
    """summary's reader folds into a driver; fed the same lines as batches, a driver ends with the
    same statistics, and a reader can fold into a driver it is given."""
    data = SAMPLE.read_bytes()
    whole = summarize_stream(io.BytesIO(data), "x", ref_time=None)
    lines = data.decode().splitlines()
    by_batch = Driver("x", ref_time=None)
    for start in range(0, len(lines), 97):
        by_batch.feed(batch(lines[start : start + 97], start + 1))
    same(whole.stats.to_dict(), by_batch.stats.to_dict())  # runs cut elsewhere: sums in another order
    given = Driver("x", ref_time=None)
    reader = Summarizer("x", driver=given)
    reader.feed(data, 0, None)  # not scanned whole: in pieces, scanned where they qualify
    assert reader.stats is given.stats
    same(given.stats.to_dict(), whole.stats.to_dict())


# -- one way in --------------------------------------------------------------------------------
def sglang_records(values: list[str]) -> list[Record]:
    p = LineParser("t")
    lines = [
        f"[2026-01-02 03:04:{i % 60:02d} TP0] Decode batch, #running-req: 4, #token: 9, token usage: 0.01, "
        f"accept len: {v}, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 99.00, "
        f"#queue-req: 0"
        for i, v in enumerate(values)
    ]
    recs = [r for i, line in enumerate(lines, 1) if isinstance(r := p.feed(line, i, 0), Record)]
    assert len(recs) == len(values)
    return recs


def test_the_reduction_passed_in_is_what_is_merged():
    """``add_columns(cols, reduced=...)`` merges the reduction it is given when the segment's
    bounds allow it (so it is the way in, not something found on the columns)."""
    cols = RecordColumns.from_records(sglang_records(["2.00"] * 40))
    other = RecordColumns.from_records(sglang_records(["3.00"] * 40))
    reduced = precompute(other)
    assert reduced is not None
    st = SourceStats("t")
    st.add_columns(cols, reduced=reduced)
    assert st.total.accept_len.mean == pytest.approx(3.0)
    plain = SourceStats("t")
    plain.add_columns(cols, reduced=precompute(cols))
    assert plain.total.accept_len.mean == pytest.approx(2.0)


def test_a_reduction_outside_the_segments_bounds_is_not_used():
    recs = sglang_records([f"{1 + (i % 9) / 4:.2f}" for i in range(200)])  # up to 3.00
    plain, pre = SourceStats("t"), SourceStats("t")
    for st in (plain, pre):
        st.current.config.num_steps = 1  # accept len ≤ 2: some of these values are refused
    plain.add_columns(RecordColumns.from_records(recs))
    cols = RecordColumns.from_records(recs)
    reduced = precompute(cols)
    assert reduced is not None and reduced.max_accept_len == 3.0
    pre.add_columns(cols, reduced=reduced)
    assert pre.current.all.accept_len.out_of_range > 0
    assert pre.to_dict() == plain.to_dict()


def test_a_status_says_why_without_the_panes_own_name_in_front():
    """The SSH source says ``host:/dir/server.log: the host has not started reading it …``; the
    pane's title names that file already, so its header keeps the words that say why (a narrow
    header cut them off after the path). Another file's name, and a message that is only the
    name, stay."""
    st = PaneState("gpu1:/var/log/server.log")
    st.feed(ev(EventKind.CONNECTED, None))
    why = "the host has not started reading it 10 s after it was asked; still waiting"
    st.feed(SourceEvent(st.name, EventKind.WAITING, f"{st.name}: {why}", None, data={"reason": "slow_start"}))
    assert st.status_text(now=0.0, wall=0.0) == f"waiting ({why})"
    other = f"gpu1:/var/log/server.log.1: {why}"
    st.feed(SourceEvent(st.name, EventKind.WAITING, other, None))
    assert st.status_text(now=0.0, wall=0.0) == f"waiting ({other})"
    st.feed(SourceEvent(st.name, EventKind.ERROR, f"{st.name}: connection refused (retrying)", None))
    assert st.status_text(now=0.0, wall=0.0) == "error (connection refused (retrying))"
    # the app's pane: named by its label, placed by its path; the source says host:/dir/name
    from types import SimpleNamespace

    app = PaneState("gpu1:server.log", "/var/log/server.log")
    app.source = SimpleNamespace(name="gpu1:/var/log/server.log")
    app.feed(ev(EventKind.CONNECTED, None))
    app.feed(
        SourceEvent("gpu1:/var/log/server.log", EventKind.WAITING, f"gpu1:/var/log/server.log: {why}", None)
    )
    assert app.status_text(now=0.0, wall=0.0) == f"waiting ({why})"


def test_columns_carry_nothing_for_the_statistics_on_the_side():
    assert not hasattr(RecordColumns.from_records(sglang_records(["2.00"])), "extra")


def test_a_host_slow_to_start_its_reader_is_a_wait_not_an_error():
    """The SSH source's slow-start notice (ssh/tail.py) is a ``waiting`` event: the pane says
    "waiting (…)" with a warning, never "error", and goes live when the lines come."""
    st = PaneState("x")
    st.feed(ev(EventKind.CONNECTED, None))
    st.feed(ev(EventKind.WAITING, None, reason="slow_start", seconds=10.0))
    assert st.status == Status.WAITING and st.error is None
    assert st.status_text(now=0.0, wall=0.0).startswith("waiting (waiting happened")
    (n,) = st.take_notices()
    assert (n.severity, n.title) == ("warning", "x: waiting for the host")
    st.feed(ev(EventKind.WAITING))  # a file not there yet: no toast, as before
    assert st.take_notices() == []
    st.feed(batch(["INFO 05-01 10:00:00 [x.py:1] a line"], 1))
    assert st.status == Status.LIVE
