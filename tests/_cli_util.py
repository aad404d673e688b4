"""Running the real CLI as a subprocess, shared by the tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def summary_json(*args: str, timeout: float = 120, quiet: bool = False) -> dict:
    """``specwatch summary --json ARGS`` from the repository root: its JSON (exit status 0
    asserted; ``quiet``: nothing on stderr either)."""
    out = subprocess.run(
        [sys.executable, "-m", "tui", "summary", "--json", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    if quiet:
        assert out.stderr == ""
    return json.loads(out.stdout)
