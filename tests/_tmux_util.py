"""Reading a tmux session started by the ``tmux`` fixture (tests/conftest.py)."""

from __future__ import annotations

import subprocess


def capture(name: str) -> str:
    """The session's screen, as text."""
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout


def pane(name: str, fmt: str) -> str:
    """A tmux format of the session's pane (``#{pane_pid}``, ``#{alternate_on}``, ...)."""
    return subprocess.run(
        ["tmux", "display-message", "-p", "-t", name, fmt], capture_output=True, text=True
    ).stdout.strip()
