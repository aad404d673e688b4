"""vLLM prints no year: an old local log keeps its own year (the file's mtime), in `stream`
and in the app, never silently the current year."""

from __future__ import annotations

import calendar
from pathlib import Path

from _scan_util import MTIME_2024, old_log

from tui.core.sources.base import EventKind, LineBatch, SourceEvent
from tui.panes.state import PaneState

ROOT = Path(__file__).parent.resolve().parents[1]


def test_a_pane_gives_an_old_vllm_log_its_own_year(tmp_path):
    log = old_log(tmp_path)
    state = PaneState("old", str(log))
    state.on_event(SourceEvent("old", EventKind.OPENED, "reading", str(log), data={"mtime": MTIME_2024}))
    lines = log.read_text().splitlines()
    offsets = [sum(len(x) + 1 for x in lines[:i]) for i in range(len(lines))]
    state.feed_lines(LineBatch("old", lines, offsets, 1, str(log)))
    first = state.stats.current.all.first_ts
    assert first is not None and first == calendar.timegm((2024, 11, 20, 11, 2, 10, 0, 0, 0))
