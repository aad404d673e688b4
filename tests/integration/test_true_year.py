"""vLLM prints no year: an old local log keeps its own year (the file's mtime), in `stream`
and in the app, never silently the current year."""

from __future__ import annotations

import calendar
import json
import os
from pathlib import Path

from _cli_util import run_cli

from tui.core.sources.base import EventKind, LineBatch, SourceEvent
from tui.panes.state import PaneState

ROOT = Path(__file__).parent.resolve().parents[1]
LINE = (
    "(APIServer pid=4321) INFO 11-20 11:02:{s:02d} [metrics.py:101] SpecDecoding metrics: Mean acceptance "
    "length: 2.85, Accepted throughput: 195.10 tokens/s, Drafted throughput: 316.80 tokens/s, Accepted: 1951 "
    "tokens, Drafted: 3168 tokens, Per-position acceptance rate: 0.847, 0.573, 0.428, Avg Draft acceptance "
    "rate: 61.6%\n"
)
MTIME_2024 = calendar.timegm((2024, 11, 21, 0, 0, 0, 0, 0, 0))


def old_log(tmp_path: Path) -> Path:
    log = tmp_path / "vllm-2024.log"
    log.write_text("".join(LINE.format(s=s) for s in range(10, 40, 10)))
    os.utime(log, (MTIME_2024, MTIME_2024))
    return log


def test_stream_gives_an_old_vllm_log_its_own_year(tmp_path):
    log = old_log(tmp_path)
    out = run_cli("stream", "--jsonl", "--no-follow", str(log))
    assert out.returncode == 0, out.stderr
    stamps = [json.loads(x)["timestamp"] for x in out.stdout.splitlines() if '"kind": "record"' in x]
    assert stamps == ["2024-11-20 11:02:10", "2024-11-20 11:02:20", "2024-11-20 11:02:30"]


def test_a_pane_gives_an_old_vllm_log_its_own_year(tmp_path):
    log = old_log(tmp_path)
    state = PaneState("old", str(log))
    state.on_event(SourceEvent("old", EventKind.OPENED, "reading", str(log), data={"mtime": MTIME_2024}))
    lines = log.read_text().splitlines()
    offsets = [sum(len(x) + 1 for x in lines[:i]) for i in range(len(lines))]
    state.feed_lines(LineBatch("old", lines, offsets, 1, str(log)))
    first = state.stats.current.all.first_ts
    assert first is not None and first == calendar.timegm((2024, 11, 20, 11, 2, 10, 0, 0, 0))
