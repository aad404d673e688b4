"""A compare pane too short for the numbers' config row says the config in one line (issue 31,
item 8: the demo at 100x30 shows what was fixed): the prefix goes first, then the word ``draft=``,
then the draft's name from its start (its end tells runs apart), then the rest with ``…``."""

from __future__ import annotations

from tui.widgets.config_line import config_line

LABEL = "EAGLE3 steps=5 topk=1 ndt=6 draft=eagle3-llama3.1-8b-fixed"


def test_a_config_in_one_line_keeps_what_tells_runs_apart():
    assert config_line("seg 1: ", LABEL, 80) == "seg 1: " + LABEL
    assert config_line("seg 1: ", LABEL, 58) == LABEL
    assert config_line("seg 1: ", LABEL, 52) == "EAGLE3 steps=5 topk=1 ndt=6 eagle3-llama3.1-8b-fixed"
    assert config_line("seg 1: ", LABEL, 46) == "EAGLE3 steps=5 topk=1 ndt=6 draft=….1-8b-fixed"
    assert config_line("seg 1: ", LABEL, 36) == "EAGLE3 steps=5 topk=1 ndt=6 …"
    assert all(len(config_line("", LABEL, w)) <= w for w in range(1, 70))
