"""Alerts from the command line and specwatch.toml: ``stream --alert`` as a real subprocess
(the CI gate's exit status, the alert line, ``--on-alert``), and the config's ``alerts`` lists."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from _cli_util import run_cli
from _wait import wait_until, wait_until_async

ROOT = Path(__file__).parent.resolve().parents[1]
SAMPLE = ROOT / "sample_logs" / "sglang_eagle3_restart.log"  # the broken run's accept len is ~1.5


def stream(*args: str, xdg: Path) -> subprocess.CompletedProcess:
    return run_cli("stream", *args, env={"XDG_CONFIG_HOME": str(xdg)})


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
    wait_until(
        lambda: out.exists() and out.read_text().count("\n") >= 6, what="the on-alert command's output"
    )
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
        (["--alert", "verdict=lower"], "--alert 'verdict=lower': a verdict needs two sources (A B)"),
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


def sglang_lines(values: list[float], start: float = 1_767_322_800.0) -> str:
    """SGLang decode lines, one a second, with the given accept lens."""
    from datetime import UTC, datetime

    out = []
    for i, v in enumerate(values):
        ts = datetime.fromtimestamp(start + i, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
        out.append(
            f"[{ts} TP0] Decode batch, #running-req: 4, #token: {i}, token usage: 0.01, "
            f"accept len: {v:.2f}, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 99.00, "
            "#queue-req: 0\n"
        )
    return "".join(out)


def test_stream_drift_alert_suggests_a_new_segment(tmp_path):
    import random

    rng = random.Random(5)
    vals = [3.0 + rng.gauss(0, 0.3) for _ in range(1000)] + [2.6 + rng.gauss(0, 0.3) for _ in range(1000)]
    log = tmp_path / "drifting.log"
    log.write_text(sglang_lines(vals))
    r = stream("--no-follow", "--jsonl", "--alert", "drift", str(log), xdg=tmp_path)
    assert r.returncode == 0, r.stderr
    out = [json.loads(line) for line in r.stdout.splitlines()]
    alerts = [(k, d) for k, d in enumerate(out) if d["kind"] == "alert"]
    assert len(alerts) == 1
    k, a = alerts[0]
    assert (a["rule"], a["state"], a["suggest"], a["segment"]) == ("drift", "firing", "new_segment", 0)
    assert "drifted down" in a["message"]
    records_before = sum(1 for d in out[:k] if d["kind"] == "record")
    assert 1000 < records_before < 1600  # printed right after the record that tipped it


def test_stream_verdict_rule_with_two_sources(tmp_path):
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_text(sglang_lines([3.0 + 0.1 * (i % 5) for i in range(200)]))
    b.write_text(sglang_lines([2.0 + 0.1 * (i % 5) for i in range(200)]))
    r = stream("--no-follow", "--alert", "verdict=lower", "--exit-on-alert", f"A={a}", f"B={b}", xdg=tmp_path)
    assert r.returncode == 3, r.stderr
    assert r.stdout.splitlines()[-1].startswith("[A → B] ALERT verdict is lower, since ")


async def test_export_says_alerts_on_stderr_even_when_quiet():
    import asyncio
    import io

    from tui.cli.alert_args import Alerting
    from tui.cli.export import Exporter
    from tui.core.alerts.engine import AlertEngine, parse_rule
    from tui.core.sources.lines import START
    from tui.core.sources.spec import expand_source_args

    err = io.StringIO()
    exp = Exporter(
        expand_source_args([str(SAMPLE)]),
        addr="127.0.0.1",
        port=0,
        start=START,
        options={"idle_after": None},
        quiet=True,
        err=err,
        alerting=Alerting(AlertEngine([parse_rule("accept_len<2.0 for 30s")])),
    )
    task = asyncio.create_task(exp.run())
    try:
        await wait_until_async(
            lambda: "alert resolved" in err.getvalue(), what="the alert resolved", show=err.getvalue
        )
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    lines = err.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"specwatch export: ALERT {SAMPLE}: mean accept_len over 30s = 1.4")
    assert lines[1].startswith("specwatch export: alert resolved:")
