"""Hostile input through the app: the Pilot (screen, titles, notifications, tables, compare bar)
and a real terminal (tmux with ``set-clipboard on``: the window title and the clipboard stay as
they were, the frame is never cleared). With CI=true a missing tmux fails.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from _ci import missing
from _hostile_util import CLEAR, CLIPBOARD, ROOT, TITLE, forty_lines, unsafe_in, write_hostile
from _tui_util import _isolated_config, screen_text, wait_ended  # noqa: F401

from tui.app import SpecwatchApp
from tui.panes.launch import LaunchPlan, replay_pane
from tui.widgets.log_tail import LogTail


# -- the app (Pilot) ------------------------------------------------------------------------------------
async def test_app_shows_hostile_text_and_absurd_values_without_obeying_or_crashing(tmp_path):
    log = write_hostile(tmp_path / f"h{TITLE}.log")
    plan = LaunchPlan([replay_pane(str(log), None, speed=None)], compare=False)
    app = SpecwatchApp(plan)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        app.notify(f"remote says {TITLE}{CLIPBOARD}", title=f"host{CLEAR}")
        await pilot.pause()
        for _ in range(3):  # the app keeps ticking over nan / inf / 1e308 values
            app.screen.tick()
            await pilot.pause(0.1)
        screen = screen_text(app)
        svg = app.export_screenshot()
        assert app.is_running and app.return_code is None
        assert not unsafe_in(svg), unsafe_in(svg)
        assert "␛]2;pwned-title␇" in screen  # the draft path / log text, shown
        assert not unsafe_in(app.title) and not unsafe_in(app.screen.title or "")
        assert all(not unsafe_in(n.message) and not unsafe_in(n.title) for n in app._notifications)
        tail = app.screen.query_one(LogTail)
        assert tail.shown and not any(unsafe_in(str(tail.query_one("TailView").render())) for _ in [0])
        await pilot.press("q")


async def test_40_line_log_with_1e308_the_app_keeps_running(tmp_path):
    log = forty_lines(tmp_path / "one.log")
    app = SpecwatchApp(LaunchPlan([replay_pane(str(log), None, speed=None)], compare=False))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        for _ in range(3):
            app.screen.tick()
            await pilot.pause(0.1)
        assert app.is_running and app.return_code is None
        text = screen_text(app)
        assert "specwatch" in text and "chart unavailable" not in text
        assert not re.search(r"\d{20}", text)  # no 300-digit number anywhere on screen
        await pilot.press("q")
    assert app.return_code == 0


async def test_compare_labels_with_markup_and_escapes_stay_literal(tmp_path):
    a = write_hostile(tmp_path / f"a{TITLE}.log")
    b = write_hostile(tmp_path / "b[bold]x.log")
    panes = [replay_pane(str(a), f"A[/oops]{TITLE}", speed=None), replay_pane(str(b), None, speed=None)]
    app = SpecwatchApp(LaunchPlan(panes, compare=True))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        app.screen.tick()
        await pilot.pause()
        assert app.is_running and app.return_code is None
        text = screen_text(app)
        assert "A[/oops]␛]2;pwned-title␇" in text
        assert "b[bold]x.log" in text
        assert not unsafe_in(app.export_screenshot())
        await pilot.press("q")


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
def tmux(tmp_path):
    if shutil.which("tmux") is None:
        missing("tmux is not installed")
    t = Tmux(tmp_path)
    yield t
    t.close()


def wait(cond, what: str, t: Tmux, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} never happened; the screen was:\n{t.screen()}")


def test_tmux_control_terminal_obeys_the_sequences(tmux):
    """The check below can fail: printed raw, these bytes do set the title and the clipboard."""
    raw = tmux.tmp / "raw.txt"
    raw.write_text(f"{TITLE}{CLIPBOARD}plain\n")
    tmux.start(f"cat {shlex.quote(str(raw))}")
    wait(lambda: tmux.title() == "pwned-title", "the raw OSC 2 title", tmux, timeout=10)
    wait(lambda: tmux.buffers() != "", "the raw OSC 52 clipboard write", tmux, timeout=10)


def test_tmux_app_keeps_title_and_clipboard(tmux):
    log = write_hostile(tmux.tmp / "hostile.log")
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "tui", str(log)])
    exit_file = tmux.start(cmd)
    wait(lambda: "hostile.log" in tmux.screen() and "records" in tmux.screen(), "the app's frame", tmux)
    before = tmux.title()
    time.sleep(2.0)  # the log tail and the segment labels are on screen by now
    screen = tmux.screen()
    assert "␛" in screen, screen  # the sequences are shown...
    assert tmux.title() == before and "pwned" not in tmux.title() and "title" not in tmux.title()
    assert tmux.buffers() == ""  # ...and the clipboard was never written
    assert "specwatch" in screen and "accept len" in screen  # the frame was never cleared
    tmux("send-keys", "-t", "t", "q")
    wait(lambda: exit_file.exists() and exit_file.read_text().strip(), "an exit after q", tmux)
    assert exit_file.read_text().strip() == "EXIT=0"
    assert tmux.title() == before and tmux.buffers() == ""
