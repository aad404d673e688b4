"""CLI habits (issue 20, item 6) as a user meets them, the CLI as a subprocess: options before or
after the command word, a binary file given to ``summary``, ``summary --format markdown``."""

from __future__ import annotations

import json
from pathlib import Path

from _cli_util import run_cli

ROOT = Path(__file__).resolve().parents[2]
A, B = ROOT / "sample_logs" / "ab_a.log", ROOT / "sample_logs" / "ab_b.log"


def test_summary_options_before_or_after_the_command_and_the_sources():
    outs = [
        run_cli("summary", "--json", str(A)),
        run_cli("summary", str(A), "--json"),
        run_cli("--json", "summary", str(A)),
        run_cli("summary", "--format", "json", str(A)),
        run_cli("--format=json", "summary", str(A)),
    ]
    for out in outs:
        assert out.returncode == 0, out.stderr
    first = json.loads(outs[0].stdout)
    assert first["sources"][0]["records"] > 0
    assert all(json.loads(o.stdout) == first for o in outs[1:])


def test_summary_options_between_sources():
    out = run_cli("summary", str(A), "--json", str(B))
    assert out.returncode == 0, out.stderr
    assert [s["label"] for s in json.loads(out.stdout)["sources"]] == ["ab_a.log", "ab_b.log"]


def test_an_options_value_is_never_the_command(tmp_path):
    # `--alert drift` takes drift as its value; `--alert summary` too (summary has no --alert):
    # the first word past them is the SOURCE of the implicit watch, whose parser then reports
    # the bad rule. Neither is "invalid choice" nor an unknown command.
    for words in (["drift"], ["summary"]):
        out = run_cli("--alert", "no such rule", "--alert", *words, str(A))
        assert out.returncode == 2
        assert "invalid choice" not in out.stderr and "unknown command" not in out.stderr
        assert "alert" in out.stderr, out.stderr


def test_alerts_before_the_source_reach_watch():
    # The implicit watch gets both --alert options whichever side of FILE they are: the same
    # complaint about the second (bad) rule either way.
    before = run_cli("--alert", "accept_len<2.0 for 30s", "--alert", "nonsense!", str(A))
    after = run_cli(str(A), "--alert", "accept_len<2.0 for 30s", "--alert", "nonsense!")
    assert before.returncode == after.returncode == 2
    assert before.stderr == after.stderr and "nonsense!" in before.stderr


def test_mistyped_command_after_options_still_gets_the_hint():
    for args in (["sumary", str(A)], ["--json", "sumary", str(A)]):
        out = run_cli(*args)
        assert out.returncode == 2
        assert "unknown command 'sumary' — did you mean 'summary'?" in out.stderr


def test_summary_of_a_binary_file_says_so(tmp_path):
    binary = tmp_path / "model.bin"
    binary.write_bytes(bytes(range(256)) * 64 + b"\x00" * 4096)
    out = run_cli("summary", str(binary))
    assert out.returncode == 2
    assert "model.bin does not look like a text log" in out.stderr
    out = run_cli("summary", "--json", str(binary))
    assert out.returncode == 2
    src = json.loads(out.stdout)["sources"][0]
    assert src["records"] == 0 and len(src["warnings"]) == 1 and "model.bin" in src["warnings"][0]


def test_a_text_log_has_no_warnings_and_a_few_garbage_bytes_are_still_text(tmp_path):
    log = tmp_path / "mixed.log"
    log.write_bytes(A.read_bytes()[:20000] + b"\xff\xfe\x00\x00 garbage\n" + A.read_bytes()[20000:40000])
    for path in (A, log):
        out = run_cli("summary", "--json", str(path))
        assert out.returncode == 0, out.stderr
        assert out.stderr == ""
        src = json.loads(out.stdout)["sources"][0]
        assert src["warnings"] == [] and src["records"] > 0


def test_summary_markdown():
    out = run_cli("summary", "--format", "markdown", f"A={A}", f"B={B}")
    assert out.returncode == 0, out.stderr
    md = out.stdout
    assert md.startswith("## specwatch summary\n")
    assert "### A (" in md and "### B (" in md and "### B − A" in md
    assert "| seg | opened by |" in md
    assert "B is higher" in md
    assert "\x1b" not in md


def test_summary_markdown_escapes_file_names(tmp_path):
    evil = tmp_path / "a|b`c<d*e_f[g](x).log"
    evil.write_bytes(A.read_bytes()[:20000])
    out = run_cli("summary", "--format", "markdown", f"x\x1b[31m|[l](u)={evil}")
    assert out.returncode == 0, out.stderr
    heading = next(ln for ln in out.stdout.splitlines() if ln.startswith("### "))
    assert "\x1b" not in out.stdout
    assert r"a\|b\`c\<d\*e\_f\[g\](x).log" in heading
    assert r"x␛\[31m\|\[l\](u)" in heading
