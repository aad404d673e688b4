"""Every command resolves SOURCE texts through the source-kind registry: summary of a config
name, a command and a glob gives the records of the file itself; a mistyped command fails at
once; ``summary FILE`` loads none of the heavy dependencies. The CLI runs as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _cli_util import run_cli

from tui.cli import _route, build_parser
from tui.cli.tui_commands import _replay_plan

ROOT = Path(__file__).parent.resolve().parent.parent
SAMPLE = ROOT / "sample_logs" / "sglang_eagle3_restart.log"
KNOWN = {"watch", "compare", "replay", "demo", "summary", "stream", "export"}


def specwatch(*argv: str, cwd: Path = ROOT, env: dict[str, str] | None = None):
    return run_cli(*argv, cwd=cwd, env=env)


@pytest.fixture
def logdir(tmp_path):
    """A copy of a sample log in its own directory, a config naming it, and an empty config home."""
    d = tmp_path / "logs"
    d.mkdir()
    log = d / "run.log"
    log.write_bytes(SAMPLE.read_bytes())
    cfg = tmp_path / "specwatch.toml"
    cfg.write_text(f'[sources]\nrun = "{log}"\n[pairs]\nboth = ["run", "cmd:cat {log}"]\n')
    (tmp_path / "xdg").mkdir()
    return tmp_path, log, cfg


def _records(stdout: str) -> list[dict]:
    """The sources of ``summary --json`` without what names them (label, source)."""
    out = json.loads(stdout)["sources"]
    for s in out:
        s.pop("label")
        s.pop("source")
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


def test_summary_of_a_glob_reads_the_newest_match(tmp_path):
    old, new = tmp_path / "a.log", tmp_path / "b.log"
    old.write_bytes(SAMPLE.read_bytes())
    new.write_bytes(b"".join(SAMPLE.read_bytes().splitlines(keepends=True)[:1500]))
    os.utime(old, (time.time() - 100, time.time() - 100))
    got = json.loads(specwatch("summary", "--json", f"{tmp_path}/*.log").stdout)["sources"][0]
    assert got["source"] == str(new) and got["lines"] == 1500


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
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "XDG_CONFIG_HOME": str(home)},
    )
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


def test_first_words_that_are_sources_go_to_watch(logdir, monkeypatch):
    tmp, log, cfg = logdir
    for word in ("a.log", "./sumary", "logs/*.log", "-", "cmd:ls", "gpu1:/x.log", "x=y"):
        assert _route([word], KNOWN) == ["watch", word]
    assert _route(["run", "--config", str(cfg)], KNOWN) == ["watch", "run", "--config", str(cfg)]
    assert _route([f"--config={cfg}"], KNOWN)[0] == f"--config={cfg}"
    monkeypatch.chdir(tmp)
    assert _route(["logs"], KNOWN) == ["watch", "logs"]  # an existing path


def test_version():
    r = specwatch("--version")
    assert (
        r.returncode == 0 and r.stdout.strip().startswith("specwatch ") and r.stdout.strip()[10:11].isdigit()
    )


def test_replay_resolves_names_and_globs(logdir):
    tmp, log, cfg = logdir
    plan = _replay_plan(
        build_parser().parse_args(["replay", "--config", str(cfg), "run", f"{log.parent}/*.log"])
    )
    assert [p.path for p in plan.panes] == [str(log), str(log)]
    assert [p.label for p in plan.panes] == ["run", "run.log"]


def test_the_registry_copies_of_settings_facts_agree(monkeypatch, tmp_path):
    from tui.core.config import settings
    from tui.core.sources import spec

    assert spec.NAME_RX.pattern == settings.NAME_RX.pattern
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert spec.default_config_path() == str(settings.default_config_path())
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative")
    assert spec.default_config_path() == str(settings.default_config_path())
