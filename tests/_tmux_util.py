"""Reading a tmux session started by the ``tmux`` fixture (tests/conftest.py)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

from _wait import wait_until

ROOT = Path(__file__).resolve().parent.parent


def start_session(args: list[str], tmp: Path, size: tuple[int, int] = (140, 40)) -> tuple[str, Path]:
    """Runs ``python -m tui ARGS`` (this tree) in a new detached tmux session in ``tmp``: its
    name and the file its exit status is written to (``EXIT=N``). The caller kills the session."""
    name = f"specwatch-test-{uuid.uuid4().hex[:8]}"
    exit_file = tmp / f"{name}.exit"
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "tui", *args])
    env = (
        f"cd {shlex.quote(str(tmp))} && unset COLUMNS LINES && "
        f"XDG_CONFIG_HOME={shlex.quote(str(tmp / 'xdg'))} PYTHONPATH={shlex.quote(str(ROOT))} "
        "TERM=xterm-256color"
    )
    # stderr is the screen (Textual draws on it): never redirect it.
    script = f"{env} {cmd}; echo EXIT=$? > {shlex.quote(str(exit_file))}; sleep 60"
    width, height = size
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", str(width), "-y", str(height), script], check=True
    )
    return name, exit_file


def kill_session(name: str) -> None:
    subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


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
