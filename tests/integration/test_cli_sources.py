"""Every command resolves SOURCE texts through the source-kind registry: summary of a config
name, a command and a glob gives the records of the file itself; a mistyped command fails at
once; ``summary FILE`` loads none of the heavy dependencies. The CLI runs as a subprocess."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from _cli_util import run_cli

ROOT = Path(__file__).parent.resolve().parent.parent
SAMPLE = ROOT / "sample_logs" / "sglang_eagle3_restart.log"


def specwatch(*argv: str, cwd: Path = ROOT, env: dict[str, str] | None = None):
    return run_cli(*argv, cwd=cwd, env=env)


def _records(stdout: str) -> list[dict]:
    """The sources of ``summary --json`` without what names them (label, source, files)."""
    out = json.loads(stdout)["sources"]
    for s in out:
        s.pop("label")
        s.pop("source")
        s.pop("files")
    return out


def test_summary_of_a_name_a_command_and_a_glob_is_the_file_itself(logdir):
    tmp, log, cfg = logdir
    env = {"XDG_CONFIG_HOME": str(tmp / "xdg")}
    direct = specwatch("summary", "--json", str(log), env=env)
    assert direct.returncode == 0, direct.stderr
    want = _records(direct.stdout)
    assert want[0]["records"] > 100 and want[0]["segments"]
    for text in ("run", f"cmd:cat {log}", f"{log.parent}/*.log"):
        got = specwatch("summary", "--json", "--config", str(cfg), text, env=env)
        assert got.returncode == 0, (text, got.stderr)
        assert _records(got.stdout) == want, text
    named = json.loads(specwatch("summary", "--json", "--config", str(cfg), "run", env=env).stdout)
    assert named["sources"][0]["label"] == "run"
    pair = json.loads(specwatch("summary", "--json", "--config", str(cfg), "both", env=env).stdout)
    assert len(pair["sources"]) == 2 and pair["comparison"] is not None


def test_summary_of_a_glob_reads_every_match_oldest_first(tmp_path):
    old, new = tmp_path / "b.log", tmp_path / "a.log"  # the names' order is not the age's
    old.write_bytes(SAMPLE.read_bytes())
    new.write_bytes(b"".join(SAMPLE.read_bytes().splitlines(keepends=True)[:1500]))
    os.utime(old, (time.time() - 100, time.time() - 100))
    got = json.loads(specwatch("summary", "--json", f"{tmp_path}/*.log").stdout)["sources"][0]
    assert [f["path"] for f in got["files"]] == [str(old), str(new)]
    assert got["lines"] == len(SAMPLE.read_bytes().splitlines()) + 1500


@pytest.mark.parametrize(
    "text, message",
    [
        ("cmd:exit 3", "the command exited with status 3"),
        ("cmd:cat /nonexistent/x.log", "No such file"),
        ("/nonexistent/*.log", "no file matches"),
        ("/nonexistent/x.log", "no such file"),
        ("nosuchname", "no such file"),
    ],
)
def test_summary_errors_are_one_line(tmp_path, text, message):
    r = specwatch("summary", text, env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1, r.stderr


def _loaded_after_summary(text: str, home: Path) -> str:
    """``summary --json TEXT`` in a fresh interpreter: its exit status and which heavy modules
    it loaded, as ``LOADED <rc> <modules>``."""
    heavy = ("textual", "asyncssh", "pydantic", "watchfiles")
    code = (
        "import sys\nfrom tui.cli import main\n"
        f"rc = main(['summary', '--json', {text!r}])\n"
        f"loaded = sorted(m for m in {heavy!r} if m in sys.modules)\n"
        "print('LOADED', rc, ','.join(loaded), file=sys.stderr)\n"
    )
    out = run_cli(python=("-c", code), env={"XDG_CONFIG_HOME": str(home)})
    return out.stderr.strip().splitlines()[-1]


def test_summary_of_a_file_imports_no_heavy_dependency(tmp_path):
    log = tmp_path / "a.log"
    log.write_bytes(b"".join(SAMPLE.read_bytes().splitlines(keepends=True)[:200]))
    assert _loaded_after_summary(str(log), tmp_path) == "LOADED 0"
    assert _loaded_after_summary(f"{tmp_path}/*.log", tmp_path) == "LOADED 0"
    # a source that needs a heavy module loads it (nothing listens on port 1: rc 2)
    assert _loaded_after_summary("ssh://127.0.0.1:1/x.log", tmp_path) == "LOADED 2 asyncssh"


def test_a_mistyped_command_fails_at_once(tmp_path):
    r = specwatch("sumary", str(SAMPLE), env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert r.returncode == 2
    assert r.stderr.strip() == "specwatch: unknown command 'sumary' — did you mean 'summary'?"
    r = specwatch("frobnicate", env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert r.returncode == 2 and "unknown command 'frobnicate'" in r.stderr and "./frobnicate" in r.stderr


def test_version():
    r = specwatch("--version")
    assert (
        r.returncode == 0 and r.stdout.strip().startswith("specwatch ") and r.stdout.strip()[10:11].isdigit()
    )
