"""The fleet screen never starves: a refresh slower than ``--refresh`` is not cancelled by the next
tick (the tick is skipped; the refresh lands and the rows come), the refresh in flight and the
rows' age are on screen, and a Prometheus that accepts the connection and never answers is an
error on screen after ``--timeout`` (a real socket that never writes), not ``asking Prometheus…``
for ever."""

from __future__ import annotations

import asyncio
import socket
import threading

import httpx
from _fleet_util import STEP, FakePrometheus
from _tui_util import _isolated_config, screen_text, wait_for  # noqa: F401

from tui.app import SpecwatchApp
from tui.core.fleet.fetch import FleetQuery
from tui.panes.fleet import FleetPlan
from tui.panes.launch import LaunchPlan
from tui.screens.fleet import FleetScreen


class SlowPrometheus(FakePrometheus):
    """Every answer 0.3 s late: a refresh (several rounds) takes far longer than the 0.05 s
    refresh interval."""

    async def slow(self, request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0.3)  # pacing: the late answer is the point
        return self.handler(request)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.slow)


def app_of(plan: FleetPlan) -> SpecwatchApp:
    return SpecwatchApp(LaunchPlan([], title="specwatch fleet", fleet=plan), remember_theme=False)


async def test_a_refresh_slower_than_the_interval_still_lands():
    fake = SlowPrometheus(vllm=4, sglang=1)
    fq = FleetQuery(window=60 * STEP, step=STEP)
    plan = FleetPlan("http://prom.test:9090", fq, transport=fake.transport(), refresh=0.05, timeout=30)
    app = app_of(plan)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, FleetScreen), "the fleet screen")
        screen = app.screen
        assert isinstance(screen, FleetScreen)
        await wait_for(pilot, lambda: "refreshing" in screen_text(app), "the refresh in flight said")
        await wait_for(pilot, lambda: screen.refreshes >= 2, "two refreshes landed")
        assert screen.skipped >= 1  # ticks came while one ran, and were skipped, not restarts
        assert len(screen.view.rows()) == 5


def test_the_status_says_how_old_late_rows_are_and_fits():
    """Rows older than the refresh interval say their age; a refresh in flight says for how
    long; an error says when; 100 groups leave the line within its two lines of 80 cells."""
    from tui.core.fleet.fetch import Fleet
    from tui.core.fleet.groups import GroupEstimate
    from tui.panes.fleet import FleetView

    fleet = Fleet("http://p:9090", 1_000_000.0, 1800.0, 30.0)
    fleet.groups = [GroupEstimate(f"draft=v{i}", 3, 3, 2.5, 0.1, 2.0, "") for i in range(100)]
    view = FleetView(fleet=fleet, updated=100.0, interval=5.0)
    assert " old" not in view.status("u", 104.0)
    late = view.status("u", 160.0, width=80, lines=2)
    assert "rows 60 s old" in late and len(late) <= 160 and "groups (b: group rows)" in late
    view.asking_since, view.error, view.failed = 150.0, "p: no answer within 10 s (--timeout)", 140.0
    text = view.status("u", 163.0, width=80, lines=2)
    assert "refreshing (13 s)…" in text and "error: p: no answer within 10 s" in text and len(text) <= 160


def silent_server() -> tuple[socket.socket, list[socket.socket]]:
    """A TCP server on 127.0.0.1 that accepts and never sends a byte."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    return srv, held


async def test_a_prometheus_that_never_answers_is_a_timeout_on_screen():
    srv, held = silent_server()
    port = srv.getsockname()[1]
    try:
        plan = FleetPlan(f"http://127.0.0.1:{port}", FleetQuery(), timeout=1.0, refresh=3600)
        app = app_of(plan)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(
                pilot, lambda: "no answer within 1 s" in screen_text(app), "the time-out on screen"
            )
            screen = app.screen
            assert isinstance(screen, FleetScreen)
            assert screen.view.asking_since is None and screen.view.fleet is None
            assert "asking Prometheus" not in screen_text(app)
    finally:
        srv.close()
        for c in held:
            c.close()
