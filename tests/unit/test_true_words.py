"""What the help, the README and the exporter's HELP say about segments is what the code does: a
restart (found in the log, or `n`) opens a segment; a truncation, rotation or switch does not."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tui.core.sources.base import EventKind, LineBatch, SourceEvent
from tui.core.stats.segments import SEGMENT_RULE
from tui.panes.state import PaneState
from tui.screens.help import HELP

ROOT = Path(__file__).resolve().parent.parent.parent


def flat(text: str) -> str:
    return " ".join(text.split())


def test_help_and_readme_say_the_same_rule():
    assert flat(SEGMENT_RULE) in flat(HELP)
    assert flat(SEGMENT_RULE) in flat((ROOT / "README.md").read_text())
    assert "truncation or\n  rotation, a newer file" not in HELP  # the old, untrue words


def test_exporter_help_says_rotation_does_not_open_a_segment():
    src = (ROOT / "tui/core/export/metrics.py").read_text()
    m = re.search(r'"specwatch_source_segments",\s*((?:"[^"]*"\s*)+)', src)
    assert m is not None
    doc = "".join(re.findall(r'"([^"]*)"', m.group(1)))
    assert "does not open" in doc and "rotation" in doc


@pytest.mark.parametrize("kind", [EventKind.TRUNCATED, EventKind.ROTATED, EventKind.SWITCHED])
def test_file_events_do_not_open_a_segment_and_a_restart_does(kind):
    # metric lines only: a startup line in the new file would open a segment (a restart, truly)
    lines = [x for x in (ROOT / "sample_logs/ab_a.log").read_text().splitlines() if "accept len" in x][:60]
    st = PaneState("x")

    def feed() -> None:
        st.feed_lines(LineBatch("x", lines, list(range(len(lines))), 1))

    feed()
    assert st.stats.records > 0
    st.on_event(SourceEvent("x", kind, "", path="/tmp/new.log"))
    feed()
    assert st.stats.current.index == 0 and st.file_marks  # marked on the chart, not a segment
    st.mark_restart()
    feed()
    assert st.stats.current.index == 1
