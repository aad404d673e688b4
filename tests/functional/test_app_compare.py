"""Compare mode, the demo, live watching, and sources that fail."""

from __future__ import annotations

import asyncio

import pytest
from _tui_util import _isolated_config, app_for, replay_app, sample, screen_text, wait_ended, wait_for  # noqa: F401
from _wait import wait_until_async
from textual.worker import WorkerState

from tui.cli.summary import _clean
from tui.core.pipeline.whole import summarize_file
from tui.core.sources.base import EventKind, LineBatch, SourceEvent
from tui.core.stats.verdicts import comparison
from tui.panes.launch import PaneSpec, demo_plan, find_sample, split_at_restart
from tui.panes.pane_numbers import verdict_forms, verdict_text
from tui.widgets.compare_bar import CompareBar
from tui.widgets.source_pane import SourcePane


async def test_compare_bar_equals_summary_comparison():
    a = summarize_file(sample("ab_a.log"), "ab_a.log", workers=1)
    b = summarize_file(sample("ab_b.log"), "ab_b.log", workers=1)
    want = _clean(comparison(a.stats, b.stats))
    app = replay_app("ab_a.log", "ab_b.log")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        got = _clean(app.screen.query_one(CompareBar).comparison)
        for key in ("diff", "ci95", "verdict", "n_a", "n_b", "mean_a", "mean_b"):
            assert got["accept_len"][key] == pytest.approx(want["accept_len"][key])
        assert got["accept_rate"]["verdict"] == want["accept_rate"]["verdict"]
        text = screen_text(app)
        lo, hi = want["accept_len"]["ci95"]
        assert f"{want['accept_len']['diff']:+.2f} (95% CI {lo:+.2f} … {hi:+.2f}): B higher" in text
        for name, s in (("ab_a.log", a), ("ab_b.log", b)):
            assert name in text
            assert f"{s.stats.total.accept_len.mean:.2f}" in text
        overlay = app.screen.overlay_data(None)
        assert [s.name for s in overlay.series] == ["A ab_a.log", "B ab_b.log"]  # named as in the headers
        # the load-adjusted verdict beside the raw one, and the throughput ratio
        assert got["accept_len_load_adjusted"]["verdict"] == want["accept_len_load_adjusted"]["verdict"]
        assert (
            "at equal batch size " + verdict_text(want["accept_len_load_adjusted"], b_name="ab_b.log") in text
        )
        assert f"throughput B / A {want['throughput']['ratio']:.2f}×" in text


async def test_compare_bar_names_b_whole_where_room_allows(tmp_path):
    # a long label is said whole at 160 columns (it was cut to 16 cells at every width), and
    # shortened only where the verdict would not fit otherwise
    a = tmp_path / "deployment_baseline_blue.log"
    b = tmp_path / "deployment_with_fixed_layer_ids.log"
    a.write_bytes(open(sample("ab_a.log"), "rb").read())
    b.write_bytes(open(sample("ab_b.log"), "rb").read())
    for size in ((160, 45), (80, 24)):
        app = replay_app(str(a), str(b))
        async with app.run_test(size=size) as pilot:
            await wait_ended(pilot)
            c = app.screen.query_one(CompareBar).comparison
            adj = c["accept_len_load_adjusted"]
            lines = [" ".join(line.split()) for line in screen_text(app).splitlines()]
            said = [line for line in lines if "equal batch" in line]
            assert said, lines
            if size[0] == 160:
                assert any(verdict_text(adj, b_name=b.name) in line for line in said), said
            else:
                # no room: "B", as the raw verdict above says it, never a label cut to pieces
                assert any(
                    verdict_forms(adj)[0] in line or verdict_forms(adj)[-1] in line for line in said
                ), said


async def test_compare_bar_says_when_the_load_differs(tmp_path):
    import random

    from _load_util import mostly, write_log

    rng = random.Random(1)
    a = write_log(tmp_path / "a.log", mostly(rng, 1, 3, 1500), 0.0, 2)
    b = write_log(tmp_path / "b.log", mostly(rng, 40, 60, 1500), 0.0, 3)
    app = replay_app(str(a), str(b))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        c = app.screen.query_one(CompareBar).comparison
        assert c is not None and c["accept_len"]["verdict"] == "lower"
        assert c["accept_len_load_adjusted"]["verdict"] == "no_difference"
        text = screen_text(app)
        assert "no significant difference" in text and "× A's batch size" in text


def test_demo_split_keeps_every_byte():
    path = find_sample("sglang_eagle3_restart.log")
    before, after = split_at_restart(path)
    assert before + after == path.read_bytes()
    assert after.startswith(b"[") and b"server_args=ServerArgs" in after.split(b"\n", 1)[0]


async def test_demo_starts_and_moves():
    # 20×: each run replays for ~30 s, longer than a busy machine takes to start the app (at 200×
    # the replays could end, and their status say so, before the first look)
    plan = demo_plan(speed=20.0)
    from tui.app import SpecwatchApp

    app = SpecwatchApp(plan)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        assert [s.label for s in screen.states] == ["broken", "fixed"]
        await wait_for(pilot, lambda: all(s.stats.records > 40 for s in screen.states))
        screen.tick()
        await wait_for(pilot, lambda: "replaying 20×" in screen_text(app), "the replay's status drawn")
        text = screen_text(app)
        assert "broken" in text and "fixed" in text and "replaying 20×" in text
        assert "Demo:" in " ".join(n.message for n in app._notifications)
        broken, fixed = (s.stats.current.all.accept_len.mean for s in screen.states)
        assert broken < 1.8 < fixed
        await pilot.press("q")
    assert app.return_code == 0
    import os

    assert not any(os.path.exists(p.path) for p in plan.panes)  # the demo's temporary files are gone


async def test_live_file_follow_and_numbers(tmp_path):
    from tui.core.sources.lines import START
    from tui.core.sources.spec import parse_source_spec
    from tui.panes.launch import live_panes

    log = tmp_path / "gpu0.log"
    lines = open(sample("ab_b.log")).read().splitlines(keepends=True)
    log.write_text("".join(lines[:1000]))
    panes = live_panes(
        [parse_source_spec(f"gpu0={log}")],
        follow=True,
        start=START,
        options={"idle_after": None, "poll_interval": 0.02, "use_inotify": False},
    )
    app = app_for(panes)
    async with app.run_test(size=(160, 45)) as pilot:
        st = app.screen.states[0]
        await wait_for(pilot, lambda: st.lines == 1000)
        with open(log, "a") as f:
            f.write("".join(lines[1000:]))
        await wait_for(pilot, lambda: st.lines == len(lines))
        app.screen.tick()
        await pilot.pause()
        want = summarize_file(str(log), workers=1).stats
        assert st.stats.total.accept_len.mean == pytest.approx(want.total.accept_len.mean)
        text = screen_text(app)
        assert "gpu0" in text and "live" in text
        assert f"{want.current.all.accept_len.mean:.2f}" in text


class _Broken:
    """A source that says it opened, sends lines, then raises."""

    name = "broken"

    def __init__(self):
        self.closed = False

    def __aiter__(self):
        return self._gen()

    async def _gen(self):
        yield SourceEvent(self.name, EventKind.OPENED, "opened")
        yield LineBatch(self.name, ["[2026-01-01 00:00:00] hello [not markup]"], [0], 1)
        await asyncio.sleep(0)  # a yield: the consumer takes the line before the failure
        raise ConnectionError("link to gpu7 went away")

    async def aclose(self):
        self.closed = True


async def test_source_errors_show_in_the_header_without_crashing(tmp_path):
    from tui.core.sources.lines import START
    from tui.core.sources.spec import parse_source_spec
    from tui.panes.launch import live_panes

    missing = live_panes(
        [parse_source_spec(str(tmp_path / "nope.log"))],
        follow=False,
        start=START,
        options={"idle_after": None},
    )
    broken = _Broken()
    panes = missing + [
        PaneSpec("gpu7", "ssh gpu7:/x.log", lambda: broken),
        PaneSpec("bad", "nowhere", lambda: (_ for _ in ()).throw(OSError("cannot connect"))),
    ]
    app = app_for(panes)
    async with app.run_test(size=(160, 45)) as pilot:
        states = app.screen.states
        await wait_for(pilot, lambda: all(s.status == "error" for s in states))
        app.screen.tick()
        await pilot.pause()
        await wait_for(
            pilot,
            lambda: states[0].status_text() == f"error (no such file: {tmp_path / 'nope.log'})",
            'states[0].status_text() == f"error (no such file: {tmp_pa...',
        )
        assert states[1].status_text() == "error (ConnectionError: link to gpu7 went away)"
        assert states[2].status_text() == "error (cannot connect)"
        assert broken.closed
        text = screen_text(app)
        # the header keeps the label and as many words of the message as fit, cut with "…"
        assert "● gpu7" in text and "error (ConnectionError: link to gpu7" in text
        await pilot.press("l")  # log tails (off by default in a grid)
        await pilot.pause()
        from tui.widgets.log_tail import LogTail

        tail = app.screen.query(SourcePane)[1].query_one(LogTail)
        shown = [r.text for r in tail.shown]
        assert "[2026-01-01 00:00:00] hello [not markup]" in shown  # raw text as is, never markup
        notes = " ".join(n.message for n in app._notifications)
        assert "link to gpu7 went away" in notes
        await pilot.press("q")
    assert app.return_code == 0


async def test_status_words():
    from tui.panes.state import PaneState

    st = PaneState("x")
    assert st.status_text() == "connecting"
    st.on_event(SourceEvent("x", EventKind.RECONNECTING, "lost", data={"attempt": 3}))
    assert st.status_text() == "reconnecting (attempt 3)"
    st.on_event(SourceEvent("x", EventKind.CONNECTED, "back"))
    assert st.status_text().startswith("live")
    st.feed_lines(LineBatch("x", ["a line"], [0], 1))
    st.on_event(SourceEvent("x", EventKind.IDLE, "no new line for 30 s", data={"seconds": 30}))
    assert st.status_text(now=st.last_data + 42) == "idle for 42 s"
    st.on_event(SourceEvent("x", EventKind.EOF, "end"))
    assert st.status_text() == "ended"


async def test_the_tick_stops_while_the_app_is_taken_down():
    """App._shutdown stops the app, then removes the screen's widgets, and only then cancels the
    screen's workers: a tick in between must not look for the widgets (it used to fail the run
    with NoMatches for the overlay chart, now and then, under load)."""
    app = replay_app("ab_a.log", "ab_b.log")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        screen = app.screen
        tick = next(w for w in app.workers if w.name == "tick")
        ticks = screen.ticks
        app._running = False  # what App._shutdown does first
        await screen.query_one("#overlay-box").remove()  # then the widgets go
        await wait_until_async(lambda: tick.is_finished, what="the tick worker to stop")
        assert tick.state == WorkerState.SUCCESS  # it returned: no tick looked for the widgets
        assert screen.ticks == ticks  # no tick ran
        app._running = True


async def test_the_two_panes_end_on_the_same_row():
    from tui.screens.compare_view import natural_height

    # one log prints draft counts (the pooled row) and the other does not: different contents
    app = replay_app("vllm_v1_eagle3.log", "ab_a.log", speed=None)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        app.screen.tick()
        await pilot.pause()
        a, b = app.screen.query(SourcePane)
        assert natural_height(a) != natural_height(b)  # their contents differ in height ...
        assert a.region.bottom == b.region.bottom  # ... and both end on the same row
