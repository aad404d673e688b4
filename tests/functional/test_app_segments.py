"""In the app, on a real followed file: a copytruncate and a rotation are chart marks and log-tail
lines, not segments; a rotation into a startup opens one; an old file's age is the log's."""

from __future__ import annotations

import os
import time

from _segments_util import ARGS, dec, stamp
from _tui_util import _isolated_config, live_app, wait_for  # noqa: F401

from tui.widgets.log_tail import LogTail
from tui.widgets.source_pane import SourcePane


def lines(a: int, b: int, when: str) -> str:
    return "".join(dec(i, when) + "\n" for i in range(a, b + 1))


async def test_copytruncate_and_rotation_are_marks_a_startup_is_a_segment(tmp_path):
    log = tmp_path / "server.log"
    old = stamp(time.time() - 9 * 60)
    log.write_text(ARGS + "\n" + lines(1, 40, old))
    app = live_app(log, tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        state = screen.states[0]
        await wait_for(pilot, lambda: state.stats.records == 40)
        assert state.status_text().endswith("ago, by the log's clock)"), state.status_text()
        assert "9 min ago" in state.status_text()

        with open(log, "w") as f:  # copytruncate: the same file, emptied, then written again
            f.write(lines(41, 45, stamp(time.time())))
        await wait_for(pilot, lambda: state.stats.records == 45)
        assert [(s.index, s.records) for s in state.stats.segments] == [(0, 45)]
        status = state.status_text()  # the new lines are stamped now: no longer an old file
        assert status.startswith("live") and "clock" not in status, status

        os.rename(log, tmp_path / "server.log.1")  # rotation into a restarted server
        log.write_text(ARGS + "\n" + lines(46, 50, stamp(time.time())))
        await wait_for(pilot, lambda: state.stats.records == 50)
        assert [(s.index, s.records) for s in state.stats.segments] == [(0, 45), (1, 5)]

        screen.tick()
        pane = screen.query_one(SourcePane)
        marks = [label for _, label in pane.chart_data(None).marks]
        assert marks == ["truncated", "rotated"]
        tail = pane.query_one(LogTail)

        def shown() -> list[str]:
            return [r.text for r in tail.shown]

        for mark in ("── truncated", "── rotated"):
            await wait_for(pilot, lambda m=mark: any(t.startswith(m) for t in shown()), mark, show=shown)
        await pilot.press("q")
