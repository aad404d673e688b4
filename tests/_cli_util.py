"""Running the real CLI as a subprocess, shared by the tests: :func:`run_cli` for a command that
ends, :func:`summary_json` for ``summary --json``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 300.0
"""Seconds before a command is killed (a hang is a failure; a slow machine is not)."""


def cli_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """This environment without the terminal's size (``COLUMNS``/``LINES``: the output goes to a
    pipe), with this tree on ``PYTHONPATH``, then ``env`` over it."""
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return {**base, "PYTHONPATH": str(ROOT), **(env or {})}


def run_cli(
    *args: str,
    input: str | bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float = TIMEOUT,
    cwd: Path | str = ROOT,
    text: bool = True,
    python: tuple[str, ...] = ("-m", "tui"),
) -> subprocess.CompletedProcess:
    """``specwatch ARGS`` (``python -m tui`` of this tree; ``python=("-c", code)`` runs ``code``
    instead) run to its end in ``cwd``, its output captured; stdin is ``input`` (nothing when
    None); the environment is :func:`cli_env` with ``env``."""
    return subprocess.run(
        [sys.executable, *python, *args],
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True,
        text=text,
        env=cli_env(env),
        cwd=cwd,
        timeout=timeout,
    )


def summary_json(*args: str, timeout: float = TIMEOUT, quiet: bool = False) -> dict:
    """``specwatch summary --json ARGS`` from the repository root: its JSON (exit status 0
    asserted; ``quiet``: nothing on stderr either)."""
    out = run_cli("summary", "--json", *args, timeout=timeout)
    assert out.returncode == 0, out.stderr
    if quiet:
        assert out.stderr == ""
    return json.loads(out.stdout)
