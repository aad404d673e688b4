"""Fixtures shared by several test files: a real OpenSSH sshd on 127.0.0.1 and a user's home that
reaches it by an alias, tmux sessions running the real CLI, both fast scanners, a directory with a
log and a config naming it, small replay buffers. Plain helpers stay in the
``_*_util.py`` modules; a missing component skips on a developer's machine and fails with CI=true
(:func:`_ci.missing`)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _ci import missing
from _native_util import require_native

# Bytecode is written (and read again by the next run, and by every CLI subprocess, which only
# reads it) even where the environment says PYTHONDONTWRITEBYTECODE: without it every run compiled
# each module again and pytest rewrote every test file's assertions again, in each xdist worker
# (collecting the suite took 20 s of CPU per worker instead of 8). The caches are __pycache__
# folders, which git ignores. Set before the test files and the package are imported.
sys.dont_write_bytecode = False

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_logs" / "sglang_eagle3_restart.log"

# The start-up cache (entry points found, parsed family.toml, schema markers) of the tests' own
# processes and of every CLI they start: a folder of this run, never the user's ~/.cache.
os.environ.setdefault("SPECWATCH_CACHE_DIR", tempfile.mkdtemp(prefix="specwatch-test-cache-"))


@pytest.fixture(params=["native", "python"])
def scanner(request, monkeypatch):
    """Both fast scanners: the optional C one (missing when it is not built) and the pure-Python
    reference."""
    import tui.core.formats.fastscan as fastscan

    if request.param == "python":
        monkeypatch.setattr(fastscan, "_native", None)
    elif fastscan._native is None:
        require_native("the native scanner")
    return request.param


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    """Debian's sshd on 127.0.0.1 (its own host key, authorized key, config and pid), one per module."""
    from _ssh_util import Sshd, require_sshd  # asyncssh is imported only by the tests that need it

    require_sshd()
    server = Sshd(tmp_path_factory.mktemp("sshd"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def server(tmp_path):
    """asyncssh's in-process server on 127.0.0.1 running each command with the local ``sh``
    (:class:`_ssh_util.ExecServer`)."""
    from _ssh_util import ExecServer

    srv = ExecServer(tmp_path)
    await srv.start()
    yield srv
    await srv.stop()


@pytest.fixture
def home(tmp_path, sshd, monkeypatch):
    """HOME with ~/.ssh naming :func:`sshd` as ``logbox`` (key, config, known_hosts); no agent."""
    from _ssh_util import user_home

    h = user_home(tmp_path / "home", sshd)
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return h


TmuxStart = Callable[..., tuple[str, Path]]


@pytest.fixture
def tmux() -> Iterator[TmuxStart]:
    """``start(args, tmp, size=(140, 40))`` runs ``python -m tui ARGS`` (this tree) in a new detached
    tmux session in ``tmp`` and returns its name and the file its exit status is written to
    (``EXIT=N``); the sessions are killed after the test."""
    if shutil.which("tmux") is None:
        missing("tmux is not installed")
    sessions: list[str] = []

    from _tmux_util import kill_session, start_session

    def start(args: list[str], tmp: Path, size: tuple[int, int] = (140, 40)) -> tuple[str, Path]:
        name, exit_file = start_session(args, tmp, size)
        sessions.append(name)
        return name, exit_file

    yield start
    for name in sessions:
        kill_session(name)


def pytest_collection_modifyitems(config, items) -> None:
    """Each test is marked by the folder it lives in: ``unit``, ``functional`` (the real Textual
    app through ``run_test``, snapshots) or ``integration`` (sshd, tmux, Prometheus, signals, the
    CLI as a subprocess); ``pytest -m "not integration"`` is the fast subset."""
    for item in items:
        parts = Path(str(item.fspath)).parts
        for kind in ("unit", "functional", "integration"):
            if kind in parts:
                item.add_marker(getattr(pytest.mark, kind))
                break


@pytest.fixture
def logdir(tmp_path):
    """(tmp_path, log, config): a copy of a sample log in its own directory, a config naming it,
    and an empty config home."""
    d = tmp_path / "logs"
    d.mkdir()
    log = d / "run.log"
    log.write_bytes(SAMPLE.read_bytes())
    cfg = tmp_path / "specwatch.toml"
    cfg.write_text(f'[sources]\nrun = "{log}"\n[pairs]\nboth = ["run", "cmd:cat {log}"]\n')
    (tmp_path / "xdg").mkdir()
    return tmp_path, log, cfg


@pytest.fixture
def small_chunks(monkeypatch):
    """A replay reads 64 KiB buffers: many buffers, records paired across their edges."""
    from tui.core.sources import replay

    monkeypatch.setattr(replay, "CHUNK", 64 << 10)
