"""Hostile input in a real terminal: tmux with ``set-clipboard on`` (a server of its own); the
window title and the clipboard stay as they were, the frame is never cleared. With CI=true a
missing tmux fails."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from _ci import missing
from _hostile_util import CLIPBOARD, ROOT, TITLE, write_hostile
from _tui_util import _isolated_config, screen_text, wait_ended  # noqa: F401
from _wait import wait_until


# -- a real terminal (tmux) -----------------------------------------------------------------------------
class Tmux:
    """A private tmux server (its own socket) with ``set-clipboard on``."""

    def __init__(self, tmp: Path) -> None:
        self.sock = f"specwatch-h6-{uuid.uuid4().hex[:8]}"
        self.tmp = tmp

    def __call__(self, *args: str) -> str:
        r = subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True, timeout=10)
        return r.stdout

    def start(self, command: str) -> Path:
        exit_file = self.tmp / "exit"
        env = (
            f"cd {shlex.quote(str(self.tmp))} && unset COLUMNS LINES && "
            f"XDG_CONFIG_HOME={shlex.quote(str(self.tmp / 'xdg'))} PYTHONPATH={shlex.quote(str(ROOT))} "
            "TERM=xterm-256color"
        )
        script = f"{env} {command}; echo EXIT=$? > {shlex.quote(str(exit_file))}; sleep 60"
        subprocess.run(
            [
                "tmux",
                "-L",
                self.sock,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                "160",
                "-y",
                "45",
            ],
            check=True,
            timeout=10,
        )
        self("set-option", "-g", "set-clipboard", "on")
        self("set-option", "-g", "allow-rename", "on")
        self("respawn-pane", "-k", "-t", "t", script)
        return exit_file

    def title(self) -> str:
        return self("display-message", "-p", "-t", "t", "#{pane_title}").strip()

    def buffers(self) -> str:
        return self("list-buffers")

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "t")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True, timeout=10)


@pytest.fixture
def tmux_server(tmp_path):
    """A tmux server of its own (set-clipboard on, allow-rename on), unlike conftest's ``tmux``."""
    if shutil.which("tmux") is None:
        missing("tmux is not installed")
    t = Tmux(tmp_path)
    yield t
    t.close()


def wait(cond, what: str, t: Tmux) -> None:
    """:func:`_wait.wait_until`, failing with the screen."""
    wait_until(cond, what=what, show=lambda: "\n" + t.screen(), step=0.1)


def test_tmux_control_terminal_obeys_the_sequences(tmux_server):
    tmux = tmux_server
    """The check below can fail: printed raw, these bytes do set the title and the clipboard."""
    raw = tmux.tmp / "raw.txt"
    raw.write_text(f"{TITLE}{CLIPBOARD}plain\n")
    tmux.start(f"cat {shlex.quote(str(raw))}")
    wait(lambda: tmux.title() == "pwned-title", "the raw OSC 2 title", tmux)
    wait(lambda: tmux.buffers() != "", "the raw OSC 52 clipboard write", tmux)


def test_tmux_app_keeps_title_and_clipboard(tmux_server):
    tmux = tmux_server
    log = write_hostile(tmux.tmp / "hostile.log")
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "tui", str(log)])
    exit_file = tmux.start(cmd)
    wait(lambda: "hostile.log" in tmux.screen() and "records" in tmux.screen(), "the app's frame", tmux)
    before = tmux.title()
    wait(lambda: "␛" in tmux.screen() and "accept len" in tmux.screen(), "the log tail and the numbers", tmux)
    screen = tmux.screen()
    assert "␛" in screen, screen  # the sequences are shown...
    assert tmux.title() == before and "pwned" not in tmux.title() and "title" not in tmux.title()
    assert tmux.buffers() == ""  # ...and the clipboard was never written
    assert "specwatch" in screen and "accept len" in screen  # the frame was never cleared
    tmux("send-keys", "-t", "t", "q")
    wait(lambda: exit_file.exists() and exit_file.read_text().strip(), "an exit after q", tmux)
    assert exit_file.read_text().strip() == "EXIT=0"
    assert tmux.title() == before and tmux.buffers() == ""
