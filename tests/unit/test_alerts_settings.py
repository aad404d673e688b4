"""Alert rules in the settings: each rule validated, and live plans carry the rules (the app has no exit gate)."""

from __future__ import annotations

import pytest
from _cli_util import ROOT

from tui.core.config.settings import ConfigError, parse_settings

SAMPLE = ROOT / "sample_logs" / "sglang_eagle3_restart.log"


def test_settings_validate_each_rule():
    s = parse_settings(
        'alerts = ["drift"]\n[sources]\na = { source = "x.log", alerts = ["accept_len<2 for 1m"] }\n'
    )
    assert s.alerts == ["drift"] and s.sources["a"].alerts == ["accept_len<2 for 1m"]
    assert parse_settings('[sources]\na = "x.log"\n').sources["a"].alerts == []
    with pytest.raises(ConfigError, match=r"sources\.a\.alerts: rule 1: 'throughput>': not a rule"):
        parse_settings('[sources]\na = { source = "x.log", alerts = ["throughput>"] }\n')
    with pytest.raises(ConfigError, match="alerts: Input should be a valid list"):
        parse_settings('alerts = "drift"\n')
    with pytest.raises(ConfigError, match=r"alertz: unknown key \(did you mean 'alerts'\?\)"):
        parse_settings("alertz = []\n")


def test_live_plans_carry_the_rules_and_the_app_has_no_exit_gate(tmp_path, monkeypatch):
    from tui.cli import CliError, build_parser
    from tui.cli.tui_commands import _live_plan

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    args = build_parser().parse_args(["watch", "--alert", "drift", "--on-alert", "true", f"x={SAMPLE}"])
    plan = _live_plan(args, compare=False)
    assert plan.alert_names == ["x"] and [r.text for r in plan.alerting.engine.rules] == ["drift"]
    assert plan.alerting.finish in plan.cleanup
    args = build_parser().parse_args(["watch", "--alert", "drift", "--exit-on-alert", str(SAMPLE)])
    with pytest.raises(CliError, match="--exit-on-alert is for specwatch stream"):
        _live_plan(args, compare=False)
    args = build_parser().parse_args(["watch", str(SAMPLE)])
    assert _live_plan(args, compare=False).alerting is None
