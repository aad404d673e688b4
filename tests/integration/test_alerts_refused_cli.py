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


def test_stream_flags_each_refused_value_with_its_reason(tmp_path):
    mixed, clean = generated_log(7)
    (tmp_path / "server.log").write_text("".join(mixed))
    r = run_cli("stream", "--no-follow", "--jsonl", "server.log", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    recs = [d for d in map(json.loads, r.stdout.splitlines()) if d["kind"] == "record"]
    assert len(recs) == len(mixed)
    flagged = [d for d in recs if d["refused"]]
    assert len(flagged) == len(mixed) - len(clean)
    reasons = {d["raw"].split("accept len: ")[1].split(",")[0]: d["refused"] for d in flagged}
    assert reasons == {
        "1e308": {"accept_len": "out of range", "accept_rate": "out of range"},
        "nan": {"accept_len": "not finite", "accept_rate": "not finite"},
        "-1": {"accept_len": "out of range", "accept_rate": "out of range"},
        "99": {"accept_len": "out of range", "accept_rate": "out of range"},
    }
    text = run_cli("stream", "--no-follow", "server.log", cwd=tmp_path)
    assert text.stdout.count("refused: accept_len") == len(flagged)


def test_alerts_know_the_segment_s_draft_depth(tmp_path):
    """ab_a.log's config says k = 3: an accept len of 4.50 (physically impossible there, refused by
    ``summary``) fires no `accept_len>4.2` and moves no window, exactly as without those lines."""
    import re

    lines = (
        (Path(__file__).resolve().parents[2] / "sample_logs" / "ab_a.log").read_text().splitlines(True)[:600]
    )
    mixed: list[str] = []
    for i, x in enumerate(lines):
        mixed.append(x)
        if "accept len" in x and i % 10 == 0:
            mixed.append(re.sub(r"accept len: [0-9.]+", "accept len: 4.50", x))
    rules = ("accept_len>4.2", "accept_len>2.4 for 30s", "drift")
    got = []
    for name, text in (("mixed", mixed), ("clean", lines)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "server.log").write_text("".join(text))
        args = [a for rule in rules for a in ("--alert", rule)]
        r = run_cli("stream", "--no-follow", "--jsonl", *args, "server.log", cwd=tmp_path / name)
        assert r.returncode == 0, r.stderr
        got.append(
            [
                (d["rule"], d["state"], d["value"])
                for d in map(json.loads, r.stdout.splitlines())
                if d["kind"] == "alert"
            ]
        )
    assert got[1] and got[0] == got[1]
    assert not any(rule == "accept_len>4.2" for rule, _, _ in got[0])
