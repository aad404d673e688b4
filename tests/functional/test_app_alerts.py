"""Alerts in the app: a rule firing in a replay raises a warning notification, rings the bell
and adds a mark on the charts; a drift alert offers a new segment; tui.screens.alerting reads each
pane's history once."""

from __future__ import annotations

import random

from _tui_util import _isolated_config, notifications, sample, wait_ended, wait_for  # noqa: F401

from tui.app import SpecwatchApp
from tui.cli import build_parser
from tui.cli.alert_args import Alerting
from tui.cli.tui_commands import _replay_plan
from tui.core.alerts.engine import AlertEngine, parse_rule
from tui.panes.launch import LaunchPlan
from tui.panes.state import Point
from tui.screens.alerting import AppAlerts, for_plan


def replay_plan(*argv: str) -> LaunchPlan:
    args = build_parser().parse_args(["replay", "--max", *argv])
    return _replay_plan(args)


async def test_a_rule_firing_in_replay_notifies_rings_and_marks_the_chart():
    plan = replay_plan("--alert", "accept_len<2.0 for 30s", sample("sglang_eagle3_restart.log"))
    app = SpecwatchApp(plan)
    bells: list[int] = []
    app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        await wait_for(pilot, lambda: any("alert" in n for n in notifications(app)))
        alerts = [n for n in app._notifications if n.title == "alert"]
        assert len(alerts) == 1 and alerts[0].severity == "warning"
        assert "mean accept_len over 30s = 1.4" in alerts[0].message
        assert "(accept_len<2.0 for 30s)" in alerts[0].message and "mark M1" in alerts[0].message
        # the restart ends the broken run's alert
        assert any(n.title == "alert resolved" for n in app._notifications)
        assert bells == [1]
        st = app.screen.states[0]
        assert [(n, text) for _, n, text in st.marks] == [(1, "alert: accept_len<2.0 for 30s")]
        # the chart draws it as the m key's marks are drawn
        pane = app.screen.panes[0]
        assert any(label == "M1" for _, label in pane.chart_data(None).marks)


async def test_no_rule_no_alert_machinery():
    app = SpecwatchApp(replay_plan(sample("sglang_eagle3_restart.log")))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        assert app.screen.alerts is None
        assert not any(n.title.startswith("alert") for n in app._notifications)


def pt(seq: int, t: float, v: float, seg: int = 0) -> Point:
    return Point(seq, seq, t, seg, None, v, None, None, None)


def test_history_is_read_once_and_a_restarted_pane_again():
    al = AppAlerts(AlertEngine([parse_rule("accept_len<2.0")], rearm=5.0), ["a"])
    hist = [pt(1, 0.0, 3.0), pt(2, 1.0, 1.0)]
    assert [a.state for a in al.poll([hist])] == ["firing"]
    assert al.poll([hist]) == []  # nothing new
    hist += [pt(3, 2.0, 3.0), pt(4, 10.0, 3.0)]
    assert [a.state for a in al.poll([hist])] == ["resolved"]
    again = [pt(1, 20.0, 1.0)]  # the pane's numbering started over
    assert [a.state for a in al.poll([again])] == ["firing"]


def test_drift_offers_a_new_segment():
    rng = random.Random(3)
    vals = [3.0 + rng.gauss(0, 0.3) for _ in range(800)] + [2.6 + rng.gauss(0, 0.3) for _ in range(800)]
    al = AppAlerts(AlertEngine([parse_rule("drift")]), ["a"])
    [alert] = al.poll([[pt(i + 1, float(i), v) for i, v in enumerate(vals)]])
    assert alert.suggest == "new_segment"
    assert AppAlerts.text(alert, 2).endswith("— press n to start a new segment — mark M2 on the charts")


def test_per_source_rules_follow_the_pane_labels():
    engine = AlertEngine([], {"broken": [parse_rule("accept_len<2")]})
    plan = LaunchPlan([], alerting=Alerting(engine))
    assert for_plan(plan) is None  # no panes, no rules that apply
    plan = replay_plan(sample("ab_a.log"), sample("ab_b.log"))
    plan.alerting, plan.alert_names = Alerting(engine), ["x", "broken"]
    al = for_plan(plan)
    assert al is not None
    assert al.engine.rules_for("ab_b.log") == [parse_rule("accept_len<2")]
    assert al.engine.rules_for("ab_a.log") == []


async def test_a_verdict_rule_fires_in_compare_mode():
    plan = replay_plan("--alert", "verdict=higher", sample("ab_a.log"), sample("ab_b.log"))
    app = SpecwatchApp(plan)
    app.bell = lambda: None  # type: ignore[method-assign]
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        await wait_for(pilot, lambda: any(n.title == "alert" for n in app._notifications))
        # the verdict is followed as the lines come in: on a replay read in a few large batches
        # it may clear and fire again once more lines are in (a new mark each time)
        alerts = [n.message for n in app._notifications if n.title == "alert"]
        assert alerts[0].startswith("ab_a.log → ab_b.log: verdict is higher — mark M1")
        assert all(a.startswith("ab_a.log → ab_b.log: verdict is higher — mark M") for a in alerts)
