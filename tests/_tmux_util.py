"""Reading a tmux session started by the ``tmux`` fixture (tests/conftest.py)."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path


def capture(name: str) -> str:
    """The session's screen, as text."""
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout


def pane(name: str, fmt: str) -> str:
    """A tmux format of the session's pane (``#{pane_pid}``, ``#{alternate_on}``, ...)."""
    return subprocess.run(
        ["tmux", "display-message", "-p", "-t", name, fmt], capture_output=True, text=True
    ).stdout.strip()


def wait_screen(name: str, pattern: str, timeout: float = 20.0) -> str:
    """The screen once ``pattern`` shows on it (AssertionError with the screen after ``timeout``)."""
    end = time.monotonic() + timeout
    text = ""
    while time.monotonic() < end:
        text = capture(name)
        if re.search(pattern, text):
            return text
        time.sleep(0.2)
    raise AssertionError(f"{pattern!r} never showed; the screen was:\n{text}")


def quit_and_wait(name: str, exit_file: Path, timeout: float = 10.0) -> str:
    """Press q and return the ``EXIT=N`` the session's command wrote."""
    subprocess.run(["tmux", "send-keys", "-t", name, "q"], check=True)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if exit_file.exists() and exit_file.read_text().strip():
            return exit_file.read_text().strip()
        time.sleep(0.1)
    raise AssertionError(f"no exit after q; the screen was:\n{capture(name)}")
