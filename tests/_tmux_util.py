"""Reading a tmux session started by the ``tmux`` fixture (tests/conftest.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from _wait import wait_until


def capture(name: str) -> str:
    """The session's screen, as text."""
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout


def pane(name: str, fmt: str) -> str:
    """A tmux format of the session's pane (``#{pane_pid}``, ``#{alternate_on}``, ...)."""
    return subprocess.run(
        ["tmux", "display-message", "-p", "-t", name, fmt], capture_output=True, text=True
    ).stdout.strip()


def wait_screen(name: str, pattern: str) -> str:
    """The screen once ``pattern`` shows on it (:func:`_wait.wait_until`, failing with the screen)."""

    def shown() -> str | None:
        text = capture(name)
        return text if re.search(pattern, text) else None

    return wait_until(shown, what=f"{pattern!r} on the screen", show=lambda: "\n" + capture(name), step=0.2)


def exit_status(exit_file: Path) -> str:
    """The ``EXIT=N`` the session's command wrote, or "" while it runs."""
    return exit_file.read_text().strip() if exit_file.exists() else ""


def quit_and_wait(name: str, exit_file: Path) -> str:
    """Press q and return the ``EXIT=N`` the session's command wrote."""
    subprocess.run(["tmux", "send-keys", "-t", name, "q"], check=True)
    return wait_until(
        lambda: exit_status(exit_file), what="an exit after q", show=lambda: "\n" + capture(name)
    )
