"""Alerts from the command line and specwatch.toml: ``stream --alert`` as a real subprocess
(the CI gate's exit status, the alert line, ``--on-alert``), and the config's ``alerts`` lists."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tui.core.settings import ConfigError, parse_settings

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_logs" / "sglang_eagle3_restart.log"  # the broken run's accept len is ~1.5


def stream(*args: str, xdg: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(xdg)}
    return subprocess.run(
        [sys.executable, "-m", "tui", "stream", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )


def test_exit_on_alert_exits_3_after_the_alert_line(tmp_path):
    r = stream(
        "--no-follow", "--alert", "accept_len<2.0 for 30s", "--exit-on-alert", str(SAMPLE), xdg=tmp_path
    )
    assert r.returncode == 3, r.stderr
    lines = r.stdout.splitlines()
    assert "ALERT mean accept_len over 30s = " in lines[-1] and "(accept_len<2.0 for 30s)" in lines[-1]
    assert lines[-1].startswith(f"[{SAMPLE}] ALERT ")
    assert "since 2026-" in lines[-1]
    # nothing after the alert, and the file had far more records than were printed
    n_all = sum(1 for line in SAMPLE.read_text().splitlines() if "accept len" in line)
    assert len(lines) - 1 < n_all


def test_no_firing_alert_exits_0(tmp_path):
    r = stream(
        "--no-follow", "--alert", "accept_len<0.5 for 30s", "--exit-on-alert", str(SAMPLE), xdg=tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert "ALERT" not in r.stdout


def test_jsonl_alert_event_and_resolve_at_the_restart(tmp_path):
    r = stream("--no-follow", "--jsonl", "--alert", "accept_len<2.0 for 30s", str(SAMPLE), xdg=tmp_path)
    assert r.returncode == 0, r.stderr
    alerts = [d for d in map(json.loads, r.stdout.splitlines()) if d["kind"] == "alert"]
    assert [a["state"] for a in alerts] == ["firing", "resolved"]
    fire = alerts[0]
    assert fire["rule"] == "accept_len<2.0 for 30s" and fire["segment"] == 0 and fire["suggest"] is None
    assert 1.0 < fire["value"] < 2.0 and fire["since"] < fire["time"]
    assert alerts[1]["segment"] == 1  # the restart opened segment 1: the broken run's alert ends


def test_on_alert_gets_the_alert_in_its_environment_not_its_text(tmp_path):
    out = tmp_path / "env.txt"
    cmd = f"env | grep ^SPECWATCH_ALERT_ | sort > {out}"
    r = stream(
        "--no-follow",
        "--alert",
        "accept_len<2.0 for 30s",
        "--exit-on-alert",
        "--on-alert",
        cmd,
        str(SAMPLE),
        xdg=tmp_path,
    )
    assert r.returncode == 3, r.stderr
    deadline = time.monotonic() + 10
    while not (out.exists() and out.read_text().count("\n") >= 6) and time.monotonic() < deadline:
        time.sleep(0.05)
    env = dict(line.split("=", 1) for line in out.read_text().splitlines())
    assert env["SPECWATCH_ALERT_RULE"] == "accept_len<2.0 for 30s"
    assert env["SPECWATCH_ALERT_SOURCE"] == str(SAMPLE)
    assert 1.0 < float(env["SPECWATCH_ALERT_VALUE"]) < 2.0
    assert env["SPECWATCH_ALERT_MESSAGE"].startswith(f"{SAMPLE}: mean accept_len over 30s = ")
    assert env["SPECWATCH_ALERT_STATE"] == "firing"


def test_a_failing_on_alert_command_is_reported_once(tmp_path):
    r = stream(
        "--no-follow",
        "--alert",
        "accept_len<2.0",
        "--alert",
        "accept_rate<0.5",
        "--on-alert",
        "exit 7",
        str(SAMPLE),
        xdg=tmp_path,
    )
    assert r.returncode == 0
    assert r.stderr.count("--on-alert command failed (exit status 7)") == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["--alert", "accept_lenn<2"], "--alert 'accept_lenn<2': unknown metric 'accept_lenn'"),
        (["--alert", "accept_len<2 for 3x"], "'accept_len<2 for 3x': bad duration '3x'"),
        (["--exit-on-alert"], "need alert rules"),
    ],
)
def test_bad_alert_flags_exit_2_naming_the_part(tmp_path, args, message):
    r = stream("--no-follow", *args, str(SAMPLE), xdg=tmp_path)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_config_alerts_global_and_per_source(tmp_path):
    (tmp_path / "specwatch").mkdir()
    (tmp_path / "specwatch" / "specwatch.toml").write_text(
        'alerts = ["throughput > 1e9"]\n'
        f'[sources]\nbroken = {{ source = "{SAMPLE}", alerts = ["accept_len < 2.0 for 30s"] }}\n'
    )
    r = stream("--no-follow", "--jsonl", "--exit-on-alert", "broken", xdg=tmp_path)
    assert r.returncode == 3, r.stderr
    last = json.loads(r.stdout.splitlines()[-1])
    assert (last["kind"], last["source"], last["rule"]) == ("alert", "broken", "accept_len < 2.0 for 30s")
    # the per-source rule is only for that source
    r = stream("--no-follow", "--exit-on-alert", str(SAMPLE), xdg=tmp_path)
    assert r.returncode == 0, r.stderr


def test_a_bad_rule_in_the_config_names_the_key(tmp_path):
    (tmp_path / "specwatch").mkdir()
    (tmp_path / "specwatch" / "specwatch.toml").write_text('alerts = ["drift", "verdict=worse"]\n')
    r = stream("--no-follow", "--alert", "drift", str(SAMPLE), xdg=tmp_path)
    assert r.returncode == 2
    assert "specwatch.toml: alerts: rule 2: 'verdict=worse': unknown verdict 'worse'" in r.stderr


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
