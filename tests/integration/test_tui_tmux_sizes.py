"""The real CLI in a small real terminal (tmux at 80×24 and 100×30): two files whose names differ
only at the end are told apart in the pane headers, and each full record count is on the screen.

The tmux fixture (tests/conftest.py) fails when tmux is missing and CI=true.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _tmux_util import quit_and_wait, wait_screen

from tui.core.pipeline.whole import summarize_file

ROOT = Path(__file__).parent.resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
LONG = "sglang-eagle3-llama-3.1-8b-instruct-tp2-run-"


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_replay_broken_vs_fixed_told_apart_in_a_small_terminal(tmux, tmp_path, size):
    broken, fixed = tmp_path / f"{LONG}broken.log", tmp_path / f"{LONG}fixed.log"
    broken.write_bytes((SAMPLES / "ab_a.log").read_bytes())
    fixed.write_bytes((SAMPLES / "ab_b.log").read_bytes())
    ns = [summarize_file(str(p), workers=1).stats.total.accept_len.n for p in (broken, fixed)]
    name, exit_file = tmux(["replay", "--max", broken.name, fixed.name], tmp_path, size)
    # read to the end: both headers say ended, and each file's full record count (the segment's
    # n: one segment each) is on the screen
    screen = wait_screen(name, r"(?s)B higher.*ended.*ended.*" + ".*".join(rf"\(n={n}\)" for n in ns))
    lines = screen.splitlines()
    assert len(lines) == size[1] and max(len(line) for line in lines) <= size[0]
    headers = [line for line in lines if "│ ● " in line]
    assert len(headers) == 1 and headers[0].count("ended") == 2, screen  # both panes' headers, side by side
    left, right = headers[0].split("││")
    assert "broken.log" in left and "fixed.log" in right, screen
    assert quit_and_wait(name, exit_file) == "EXIT=0"
