"""Live lines held until the screen's tick (PaneState.hold / flush): the pane ends in the state of
one fed batch by batch, and anything that follows held lines (an event, a mark, a batch of another
file) comes after them."""

from __future__ import annotations

from _pane_util import same

from tui.core.sources.base import EventKind, LineBatch, SourceEvent
from tui.panes.state import PaneState


def decode(k: int) -> str:
    al = 2.0 + (k % 7) / 10
    return (
        f"[2026-11-20 10:00:{k % 60:02d} TP0] Decode batch, #running-req: {k % 9}, #token: 10, "
        f"token usage: 0.01, accept len: {al:.2f}, accept rate: {(al - 1) / 3:.2f}, cuda graph: True, "
        f"gen throughput (token/s): {100 + k}.00, #queue-req: 0"
    )


def one_line_batches(n: int, path: str = "a.log", start: int = 1) -> list[LineBatch]:
    return [
        LineBatch("s", [decode(k) if k % 5 else "an INFO line"], [k * 100], start + k, path) for k in range(n)
    ]


def test_held_batches_fold_as_if_fed_one_by_one():
    held, fed = PaneState("s"), PaneState("s")
    batches = one_line_batches(40)
    for i, b in enumerate(batches):
        held.hold(b)
        fed.feed_lines(b)
        if i % 9 == 8:
            held.flush()
    assert held.held_lines == 40 - 36
    assert held.stats.records == 36 * 4 // 5 and held.lines == 36  # the rest not yet fed
    held.flush()
    assert held.held_lines == 0
    same(held, fed)


def test_what_follows_held_lines_comes_after_them():
    st = PaneState("s")
    for b in one_line_batches(10):
        st.hold(b)
    st.on_event(SourceEvent("s", EventKind.RESTARTED, "restart marked by you"))
    assert st.held_lines == 0 and st.lines == 10
    assert [s.records for s in st.stats.segments] == [8, 0]  # the held records before the restart
    for b in one_line_batches(5, start=11):
        st.hold(b)
    st.add_mark(1, "now")
    assert st.marks[-1][0] == st.seq == 12  # the mark after the records held before it
    assert st.raw[-1].kind == "mark" and st.raw[-2].line_no == 15


def test_a_batch_of_another_file_or_after_a_gap_flushes_the_held_ones():
    st = PaneState("s")
    for b in one_line_batches(3):
        st.hold(b)
    st.hold(one_line_batches(1, "b.log", start=1)[0])  # another file: its line 1 is not a.log's
    assert st.lines == 3 and st.held_lines == 1
    st.hold(one_line_batches(1, "b.log", start=5)[0])  # lines 2-4 not seen: not a continuation
    assert st.lines == 4 and st.held_lines == 1
    st.flush()
    assert [(r.line_no, r.kind) for r in st.raw] == [
        (1, "line"),
        (2, "metric"),
        (3, "metric"),
        (1, "line"),
        (5, "line"),
    ]
