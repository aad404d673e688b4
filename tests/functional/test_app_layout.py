"""The grid fits the terminal, `z` maximises a pane, and rendering follows the cadence (not the
data): Pilot tests on widget regions and render counters."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from _tui_util import _isolated_config, replay_app, short_samples, wait_ended, wait_for, wait_ticks  # noqa: F401
from _wait import wait_until_async

from tui.app import SpecwatchApp
from tui.core.sources.base import EventKind, LineBatch, SourceEvent
from tui.panes.launch import LaunchPlan, PaneSpec
from tui.screens import ticking
from tui.screens.ticking import CHART_EVERY, SPARK_EVERY
from tui.widgets.history_chart import MIN_ROWS, HistoryChart
from tui.widgets.layout import MIN_PANE_W, grid_shape, pane_tier
from tui.widgets.metric_spark import MetricSparks
from tui.widgets.numbers import NumbersPanel
from tui.widgets.pane_header import PaneHeader
from tui.widgets.source_pane import SourcePane

LOGS = ["ab_a.log", "ab_b.log", "sglang_dp_attention.log", "sglang_eagle3_restart.log", "vllm_v1_eagle3.log"]


def test_grid_shape_keeps_columns_wide_enough():
    assert grid_shape(8, 160) == (3, 3)
    assert grid_shape(8, 200) == (4, 2)
    assert grid_shape(16, 200) == (4, 4)
    assert grid_shape(4, 160) == (2, 2)  # balanced, not 3 + 1
    assert grid_shape(3, 100) == (2, 2)
    for n in range(1, 33):
        for w in (80, 100, 160, 200, 300):
            cols, rows = grid_shape(n, w)
            assert cols * rows >= n and (cols == 1 or w // cols >= MIN_PANE_W)
    assert pane_tier(150, 40) == "full" and pane_tier(48, 12) == "compact" and pane_tier(150, 12) == "compact"
    assert pane_tier(50, 40) == "narrow"


async def _grid_fits(tmp_path, n: int, size: tuple[int, int]) -> None:
    names = short_samples(tmp_path, *(LOGS[i % len(LOGS)] for i in range(n)))
    app = replay_app(*names, compare=False)
    async with app.run_test(size=size) as pilot:
        await wait_ended(pilot)
        screen = app.screen
        panes = list(screen.query(SourcePane))
        assert len(panes) == n
        width, height = size
        for pane in panes:
            r = pane.region
            assert r.width >= MIN_PANE_W - 1 and r.x >= 0 and r.right <= width, (pane.state.label, r)
            assert r.y >= 1 and r.bottom <= height - 1, (pane.state.label, r)  # between header and footer
            assert screen.on_screen(pane)
            header = pane.query_one(PaneHeader)
            assert header.region.right <= r.right
            text = header.plain
            assert pane.state.label in text and pane.state.status_text().split()[0] in text
            numbers = pane.query_one(NumbersPanel)
            assert numbers.region.height >= 1 and numbers.region.right <= r.right
            shown = numbers.plain
            n_text = f"(n={pane.state.stats.current.all.accept_len.n})"
            assert " ± " in shown and n_text in shown, shown
            sparks = pane.query_one(MetricSparks)
            assert sparks.region.height == 3 and sparks.region.right <= r.right
            assert sparks.rows[0].label == "accept len" and sparks.rows[0].builds >= 1  # drawn
            chart = pane.query_one(HistoryChart)
            if chart.display and pane.chart_shown:  # only with room for a y axis
                assert chart.region.height >= MIN_ROWS
        # no two panes overlap
        regions = [p.region for p in panes]
        for i, a in enumerate(regions):
            for b in regions[i + 1 :]:
                assert a.intersection(b).area == 0


async def test_eight_panes_fit_at_160x45(tmp_path):
    await _grid_fits(tmp_path, 8, (160, 45))


async def test_sixteen_panes_fit_at_200x60(tmp_path):
    await _grid_fits(tmp_path, 16, (200, 60))


async def test_z_maximises_the_focused_pane_with_its_chart_and_restores(tmp_path):
    app = replay_app(*short_samples(tmp_path, *(LOGS * 2)[:8]), compare=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        screen = app.screen
        panes = list(screen.query(SourcePane))
        assert not panes[1].chart_shown  # a 3 × 3 grid at 160 × 45: no room for a chart
        await pilot.press("tab")
        await wait_for(pilot, lambda: screen.focused_pane() is panes[1], "screen.focused_pane() is panes[1]")
        await pilot.press("z")
        await wait_for(pilot, lambda: screen.maximized is panes[1] and screen.on_screen(panes[1]), "z")
        assert not screen.on_screen(panes[0]) and screen.on_screen(panes[1])
        assert panes[1].tier == "full" and panes[1].chart_shown
        chart = panes[1].query_one(HistoryChart)
        await wait_for(pilot, lambda: chart.settled and chart.builds > 0)
        assert chart.region.height >= MIN_ROWS and chart.region.width > 100
        await pilot.press("z")
        await wait_for(
            pilot, lambda: screen.maximized is None and all(screen.on_screen(p) for p in panes), "z"
        )
        await pilot.press("enter")  # Enter does the same
        await wait_for(pilot, lambda: screen.maximized is panes[1], "enter")


class FeedSource:
    """Decode lines in small batches, ``per_tick`` batches between two of the screen's ticks (a
    live server writing steadily, paced by the app's clock rather than the wall clock), then
    waits for close."""

    name = "feed"

    def __init__(self, lines: int, per_batch: int, per_tick: int, ticks: Callable[[], int]) -> None:
        self.lines, self.per_batch, self.per_tick, self.ticks = lines, per_batch, per_tick, ticks
        self.sent = 0
        self.done = asyncio.Event()

    def __aiter__(self):
        return self._gen()

    async def _gen(self):
        yield SourceEvent(self.name, EventKind.OPENED, "feed")
        while self.sent < self.lines:
            batch = []
            for k in range(self.sent, min(self.lines, self.sent + self.per_batch)):
                al = 2.0 + (k * 37 % 100) / 100
                batch.append(
                    f"[2026-11-20 10:00:{k % 60:02d}] Decode batch, #running-req: 8, #token: {k}, "
                    f"token usage: 0.01, accept len: {al:.2f}, accept rate: {(al - 1) / 3:.2f}, "
                    f"cuda graph: True, gen throughput (token/s): 300.00, #queue-req: 0"
                )
            yield LineBatch(self.name, batch, list(range(self.sent, self.sent + len(batch))), self.sent + 1)
            self.sent += len(batch)
            if self.sent % (self.per_batch * self.per_tick) == 0:
                seen = self.ticks()
                await wait_until_async(lambda seen=seen: self.ticks() > seen, what="the next tick")
        self.done.set()
        await asyncio.Event().wait()  # stays open, like a live log

    async def aclose(self) -> None:
        pass


async def test_a_thousand_lines_cause_a_bounded_number_of_renders(monkeypatch):
    monkeypatch.setattr(ticking, "TICK", 0.05)  # the bounds count ticks, whatever their length

    def ticks() -> int:
        return getattr(app.screen, "ticks", 0)

    sources = [FeedSource(1000, 2, 125, ticks), FeedSource(1000, 2, 125, ticks)]
    panes = [PaneSpec(f"feed{i}", "generated", (lambda s=s: s)) for i, s in enumerate(sources)]
    app = SpecwatchApp(LaunchPlan(panes), remember_theme=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        pane = list(screen.query(SourcePane))[0]
        chart = pane.query_one(HistoryChart)
        spark = pane.query_one(MetricSparks).rows[0]
        await wait_ticks(pilot)
        c0, s0, t0 = chart.builds, spark.builds, screen.ticks
        await wait_for(pilot, lambda: all(s.done.is_set() for s in sources))
        await wait_ticks(pilot, CHART_EVERY + 1)  # the last chart tick
        await wait_for(pilot, lambda: chart.settled, "the chart drawn")
        assert pane.state.lines == 1000
        charts, sparks, n = chart.builds - c0, spark.builds - s0, screen.ticks - t0
        # 500 batches over n ticks; the chart is drawn at most every CHART_EVERY ticks, sparklines
        # at most twice every SPARK_EVERY
        assert n >= 4 + CHART_EVERY  # the lines came over several ticks
        assert 1 <= charts <= n // CHART_EVERY + 2, (charts, n)
        assert 1 <= sparks <= 2 * (n // SPARK_EVERY) + 3, (sparks, n)
        # hidden panes are not drawn: maximise the other one, feed more, nothing here changes
        other = list(screen.query(SourcePane))[1]
        other.focus()
        await pilot.press("z")
        await wait_ticks(pilot)
        header = pane.query_one(PaneHeader)

        def drawn() -> tuple:
            return (pane._version, pane._spark_key, pane._chart_key, header._key, chart.builds, spark.builds)

        before = drawn()
        pane.state.feed_lines(LineBatch("feed", ["x"] * 5, list(range(5)), 1001))
        await wait_ticks(pilot, CHART_EVERY + 1)  # every part was due at least once
        assert drawn() == before
        await pilot.press("z")  # shown again: brought up to date
        await wait_for(pilot, lambda: pane._version == pane.state.version, "the pane drawn again")
        assert header._key != before[3]


async def test_more_panes_than_fit_scroll_and_those_off_screen_are_not_drawn(tmp_path):
    app = replay_app(*short_samples(tmp_path, *(["ab_a.log"] * 32)), compare=False)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_ended(pilot)
        screen = app.screen
        panes = list(screen.query(SourcePane))
        shown = [p for p in panes if screen.on_screen(p)]
        hidden = [p for p in panes if not screen.on_screen(p)]
        assert shown and hidden and all(p.region.height >= 10 for p in shown)
        assert all(p.region.right <= 200 for p in panes)
        assert all(p._version == p.state.version for p in shown)
        assert all(p._version == -1 for p in hidden)  # never drawn: nobody could see it
        grid = screen.query_one("#panes")
        grid.scroll_end(animate=False)
        last = panes[-1]
        await wait_for(
            pilot, lambda: screen.on_screen(last) and last._version == last.state.version, "scrolled"
        )
        assert "±" in last.query_one(NumbersPanel).plain


async def test_compact_panes_show_the_pooled_value_when_the_log_has_one():
    app = replay_app("vllm_v1_eagle3.log", "ab_a.log", "ab_b.log", "sglang_dp_attention.log", speed=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ended(pilot)
        app.screen.tick()
        await pilot.pause()
        panes = list(app.screen.query(SourcePane))
        assert all(p.tier == "compact" for p in panes)
        texts = [p.query_one(NumbersPanel).plain for p in panes]
        pooled = panes[0].state.stats.current.all.pooled_len.estimate().value
        assert f"pooled {pooled:.2f}" in texts[0], texts[0]
        assert not any("pooled" in t for t in texts[1:])  # no counts in these logs: nothing to show


async def test_a_pane_names_what_it_hides_for_room_and_z_shows_it():
    app = replay_app(*LOGS, speed=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ended(pilot)
        app.screen.tick()
        await pilot.pause()
        pane = app.screen.query(SourcePane).first()
        assert pane.tier == "compact" and str(pane.border_subtitle).startswith("z: "), pane.border_subtitle
        assert "segments" in str(pane.border_subtitle)
        pane.focus()
        await pilot.press("z")
        await wait_for(pilot, lambda: pane.tier == "full" and not pane.border_subtitle, "every block shown")
