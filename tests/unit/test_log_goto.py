"""``g`` in the log tail: a line number or a time of day names a kept line, or says why not."""

from __future__ import annotations

from tui.panes.history import RawLine
from tui.widgets.log_goto import goto


def _lines() -> list[RawLine]:
    out = [RawLine(0, None, "── opened", "event")]
    for k in range(1, 6):
        out.append(RawLine(k, 100 + k, f"[2026-11-20 23:59:5{k}] Decode batch, accept len: 2.0", "metric"))
    out.append(RawLine(6, 106, "[2026-11-21 00:00:10] Decode batch, accept len: 2.1", "metric"))
    return out


def test_a_line_number_names_that_line():
    assert goto(_lines(), "103") == (3, "line 103")
    assert goto(_lines(), "line 1,05")[0] == 5


def test_a_line_not_kept_says_which_lines_are():
    found, words = goto(_lines(), "99")
    assert found is None and "101–106" in words


def test_a_time_names_the_first_line_at_or_after_it_on_the_newest_day():
    assert goto(_lines(), "00:00")[0] == 6  # the newest day: 2026-11-21
    found, words = goto(_lines(), "23:59:53")  # still to come on the 21st: the day before
    assert found == 3 and "23:59:53" in words


def test_a_time_outside_the_tail_and_nonsense_are_said():
    assert goto(_lines(), "23:00")[0] is None
    assert "before the log tail's oldest line" in goto(_lines(), "23:00")[1]
    assert goto(_lines(), "00:05")[0] is None and "after the newest line" in goto(_lines(), "00:05")[1]
    assert "after the newest line" in goto(_lines(), "11:00")[1]  # nearer the 21st's newest line
    assert goto(_lines(), "25:00")[0] is None
    assert "type a line number" in goto(_lines(), "yesterday")[1]
