"""``specwatch watch metrics+http://...``: the TUI opens metrics sources through open_source like any
other; its pane shows the records of the scraped server (a Pilot test on a local endpoint)."""

from __future__ import annotations

import pytest
from _prom_util import FakeVllm, PromServer
from _tui_util import _isolated_config, app_for, screen_text, wait_for  # noqa: F401

from tui.core.sources.lines import START
from tui.core.sources.spec import expand_source_args
from tui.panes.launch import live_panes
from tui.widgets.source_pane import SourcePane


async def test_watch_shows_a_metrics_source():
    fake = FakeVllm(engines=2, k=3)
    server = PromServer(fake.text).start()
    try:
        specs = expand_source_args([f"gpu1=metrics+{server.url}"])
        panes = live_panes(
            specs, follow=True, start=START, options={"idle_after": None, "scrape_interval": 0.05}
        )
        app = app_for(panes)
        async with app.run_test(size=(160, 45)) as pilot:
            pane = app.screen.query_one(SourcePane)
            await wait_for(pilot, lambda: pane.state.status == "live")
            for n in range(1, 4):
                fake.step(0, 20, [15, 10, 5])
                fake.step(1, 10, [9, 8, 7])
                await wait_for(pilot, lambda n=n: pane.state.stats.records >= 2 * n)
            seg = pane.state.stats.current
            assert seg.config.model_path == fake.model and seg.config.num_speculative_tokens == 3
            assert seg.ranks["engine 0"].accept_len.mean == pytest.approx(2.5)
            assert seg.ranks["engine 1"].accept_len.mean == pytest.approx(3.4)
            assert seg.all.accept_len.mean == pytest.approx(2.95)
            app.screen.tick()
            await wait_for(
                pilot,
                lambda: "gpu1" in (t := screen_text(app)) and "2.95" in t,
                "the numbers drawn",
                show=lambda: screen_text(app),
            )
    finally:
        server.stop()
