"""A pane fed whole buffers (a replay at full speed) ends in the state of a pane fed the same lines one by one: sglang restarts and odd lines; the raw tail and the pieces a buffer is cut into."""

from __future__ import annotations

from _pane_util import batches, fed, same
from _tui_util import _isolated_config, replay_app, screen_text, wait_ended  # noqa: F401

from tui.core.sources.base import LineBatch
from tui.panes.state import PaneState
from tui.panes.whole_buffer import pieces


def sglang(k: int, steps: int) -> str:
    s = k % 60
    al = 1.5 + steps * 0.25 + ((k * 7919) % 100) / 200
    return (
        f"[2026-11-20 10:{k // 60 % 60:02d}:{s:02d} TP0] Decode batch, #running-req: {1 + k % 30}, "
        f"#token: {k % 9000}, token usage: 0.01, accept len: {al:.2f}, accept rate: {(al - 1) / steps:.2f}, "
        f"cuda graph: True, gen throughput (token/s): {100 + k % 2000:.2f}, #queue-req: 0"
    )


def test_sglang_restarts_and_odd_lines_in_buffers_equal_line_by_line(tmp_path, small_chunks):
    lines = []
    steps = 3
    for k in range(12_000):
        if k % 4000 == 1000:  # a restart: the buffer holding it goes line by line
            steps += 1
            lines.append(
                f"[2026-11-20 10:00:00] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', "
                f"speculative_num_steps={steps}, speculative_eagle_topk=1, "
                f"speculative_num_draft_tokens={steps + 1})"
            )
        elif k % 997 == 0:
            lines.append("[2026-11-20 10:00:00 TP0] Decode batch, accept len: nonsense")
        lines.append(sglang(k, steps))
        if k % 7 == 0:
            lines.append("[2026-11-20 10:00:00] INFO: 127.0.0.1 - POST /generate HTTP/1.1 200 OK")
    path = tmp_path / "sglang.log"
    path.write_text("\n".join(lines))  # no newline at the end: the last buffer gets one
    items = batches(path)
    bulk, fast = fed(items, True)
    line, _ = fed(items, False)
    assert 0 < fast < sum(isinstance(b, LineBatch) for b in items)  # both paths taken
    assert len(bulk.stats.segments) >= 3
    same(bulk, line)


def test_raw_tail_made_when_read_keeps_the_newest_lines_in_order():
    st = PaneState("r")
    n = 0
    for size in (4000, 7000, 9000, 3):
        st.feed_lines(LineBatch("r", [f"line {n + i}" for i in range(size)], list(range(size)), n + 1))
        n += size
    st.note_raw("an event")
    raw = list(st.raw)
    assert len(raw) == 10_000
    assert raw[-1].text == "an event" and raw[-1].seq == st.raw_seq == n + 1
    assert [r.text for r in raw[:-1]] == [f"line {i}" for i in range(n - 9999, n)]
    assert [r.seq for r in raw] == list(range(n + 1 - 9999, n + 2))


def test_pieces_cut_a_buffer_at_line_starts():
    lines = [f"line {i} " + "x" * (i % 50) for i in range(3000)]
    data = "".join(line + "\n" for line in lines).encode()
    offs, at = [], 1000
    for line in lines:
        offs.append(at)
        at += len(line) + 1
    batch = LineBatch("r", lines, offs, 7, "p", "log", data)
    parts = pieces(batch, 10_000)
    assert len(parts) == len(data) // 10_000 + 1
    assert b"".join(p.data or b"" for p in parts) == data
    assert [x for p in parts for x in p.lines] == lines
    for p in parts:
        assert p.data == "".join(x + "\n" for x in p.lines).encode()
        assert (
            p.first_line_no == 7 + lines.index(p.lines[0])
            and p.offsets == offs[p.first_line_no - 7 :][: len(p.lines)]
        )
        assert len(p.data) < 10_000 + 60
    assert pieces(batch, len(data)) == [batch]
