"""An ended ``replay --max`` is browsed, not read again: ``[`` / ``]`` show the segments of what
was read (the lines read and the file's opens stay as they were); ``n`` in a replay marks the
log's time, not the wall clock."""

from __future__ import annotations

import time

from _tui_util import (  # noqa: F401
    _isolated_config,
    replay_app,
    screen_text,
    wait_ended,
    wait_for,
    wait_ticks,
)

from tui.core.sources import replay as replay_mod
from tui.widgets.source_pane import SourcePane

LOG = "sglang_eagle3_restart.log"


async def test_brackets_browse_an_ended_replay_without_reading_again(monkeypatch):
    opened: list[str] = []
    real_open = replay_mod.os.open

    def counting_open(path, *a, **kw):
        if str(path).endswith(LOG):
            opened.append(str(path))
        return real_open(path, *a, **kw)

    monkeypatch.setattr(replay_mod.os, "open", counting_open)
    app = replay_app(LOG)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        pane = app.screen.query_one(SourcePane)
        st = pane.state
        lines, records, opens = st.lines, len(st.history), len(opened)
        assert opens == 1
        segs = [s.index for s in st.stats.segments]
        assert lines == 4001 and segs == [0, 1]
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: pane.selected == 0, "segment 0 shown")
        assert "segment 0" in " ".join(n.message for n in app._notifications)
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: pane.selected is None, "the newest segment followed again")
        for _ in range(3):  # the app keeps ticking: nothing more is read
            await pilot.press("left_square_bracket")
            await pilot.pause()
        await wait_for(pilot, lambda: pane.selected == 0, "segment 0 shown (the first one: no further back)")
        assert (st.lines, len(st.history), len(opened)) == (lines, records, opens)
        assert st.status == "ended"


async def test_marks_in_a_replay_are_stamped_with_the_log_clock():
    app = replay_app(LOG)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        pane = app.screen.query_one(SourcePane)
        newest = max(p.timestamp for p in pane.state.history if p.timestamp is not None)
        log_time = time.strftime("%H:%M:%S", time.gmtime(newest))  # naive seconds: the log's fields
        assert log_time == "09:21:44"  # the sample's last decode line
        await pilot.press("n")
        await wait_for(pilot, lambda: pane.state.stats.current.index == 2, "segment 2 opened by n")
        seg = pane.state.stats.current
        assert seg.start_ts == newest
        assert any(
            f"restart marked by you at {log_time} by the log's clock" in r.text for r in pane.state.raw
        )
        await pilot.press("m")

        def notes() -> str:
            return " ".join(n.message for n in app._notifications)

        await wait_for(
            pilot, lambda: f"M1 at {log_time} by the log's clock" in notes(), "the mark's note", show=notes
        )
        await wait_ticks(pilot, 2)
        text = screen_text(app)
        assert f"2  {log_time}" in text  # the segment table's start column: the log's time
