"""The glance in a real terminal (tmux, capture-pane): at 80×24 a compare of two logs whose last
line is days old names A and B in their headers with a whole status, and a grid of 16 sources
whose names differ only in the middle shows every header distinct, each with its node.

The tmux fixture (tests/conftest.py) fails when tmux is missing and CI=true.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _tmux_util import quit_and_wait, wait_screen

ROOT = Path(__file__).parent.resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
NODE = "eagle3-llama3.1-8b-node{:02d}-tp8.log"


def headers(screen: str) -> list[str]:
    """Each pane's header row: the text between a border and the next."""
    return [h.strip() for line in screen.splitlines() for h in re.findall(r"│ (● [^│]*?)\s*│", line)]


def test_compare_of_old_logs_at_80x24_names_a_and_b(tmux, tmp_path):
    for name in ("ab_a.log", "ab_b.log"):
        (tmp_path / name).write_bytes((SAMPLES / name).read_bytes())
    name, exit_file = tmux(["compare", "ab_a.log", "ab_b.log"], tmp_path, (80, 24))
    screen = wait_screen(name, r"(?s)● A ab_a\.log.*live.*\d+ d.*● B ab_b\.log.*live.*\d+ d")
    lines = screen.splitlines()
    assert len(lines) == 24 and max(len(line) for line in lines) <= 80
    heads = headers(screen)
    assert len(heads) == 2, screen
    assert heads[0].startswith("● A ab_a.log") and heads[1].startswith("● B ab_b.log"), heads
    for h in heads:  # the status whole (its short form at this width), never cut
        assert re.search(r"live · \d+ d old$|live \(last line \d+ d ago, by the log's clock\)$", h), h
    assert "B − A" in screen
    assert quit_and_wait(name, exit_file) == "EXIT=0"


@pytest.mark.parametrize(
    ("size", "visible"), [((100, 30), 4), ((160, 45), 9), ((200, 60), 16)], ids=["100x30", "160x45", "200x60"]
)
def test_grid_of_16_look_alike_names_every_header_distinct(tmux, tmp_path, size, visible):
    data = (SAMPLES / "ab_a.log").read_bytes()
    names = [NODE.format(i) for i in range(1, 17)]
    for n in names:
        (tmp_path / n).write_bytes(data)
    name, exit_file = tmux(["replay", "--max", *names], tmp_path, size)
    screen = wait_screen(name, rf"(?s)(● [^│]*ended.*){{{visible}}}")  # the panes on the screen, ended
    heads = headers(screen)
    assert len(heads) >= visible, screen
    assert len(set(heads)) == len(heads), heads
    nodes = []
    for h in heads:
        m = re.search(r"node(\d\d)", h)
        assert m is not None, h  # the part that tells the panes apart, whole
        nodes.append(int(m.group(1)))
    assert len(set(nodes)) == len(nodes) and set(nodes) <= set(range(1, 17)), nodes
    assert quit_and_wait(name, exit_file) == "EXIT=0"
