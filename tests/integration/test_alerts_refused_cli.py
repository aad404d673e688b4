"""``stream --no-follow --alert ... --jsonl`` as a real subprocess on a log with lines whose values
the statistics refuse (``1e308``, ``nan``, ``-1``, ``99``) prints the same alert lines as on the
same log without those lines."""

from __future__ import annotations

import json
from pathlib import Path

from _cli_util import run_cli
from _refused_util import generated_log

RULES = ("accept_len<2.0 for 30s", "accept_len>50", "accept_len<1.2", "accept_rate>0.9", "drift")


def alert_lines(lines: list[str], where: Path, xdg: Path) -> list[dict]:
    """The alert lines of ``stream`` on ``lines`` written to ``where``/server.log, run in ``where``
    (so the source name, which the messages carry, is ``server.log`` for both logs)."""
    where.mkdir()
    (where / "server.log").write_text("".join(lines))
    args = [a for rule in RULES for a in ("--alert", rule)]
    env = {"XDG_CONFIG_HOME": str(xdg)}
    r = run_cli("stream", "--no-follow", "--jsonl", *args, "server.log", env=env, cwd=where)
    assert r.returncode == 0, r.stderr
    return [d for d in map(json.loads, r.stdout.splitlines()) if d["kind"] == "alert"]


def test_refused_values_change_no_alert_line(tmp_path):
    mixed, clean = generated_log(7)
    expected = alert_lines(clean, tmp_path / "clean", tmp_path)
    assert {a["rule"] for a in expected} >= {"accept_len<2.0 for 30s", "accept_rate>0.9", "drift"}
    assert alert_lines(mixed, tmp_path / "mixed", tmp_path) == expected
