"""Hostile input in a real terminal: tmux with ``set-clipboard on`` (a server of its own); the
window title and the clipboard stay as they were, the frame is never cleared. With CI=true a
missing tmux fails."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path

import pytest
from _ci import missing
from _hostile_util import CLIPBOARD, DRAFT, ROOT, TITLE, decode, server_args, write_hostile
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


# -- /metrics fetched in a terminal ----------------------------------------------------------------------
OSC0 = "\x1b]0;pwned\x07"


def test_curl_of_metrics_keeps_the_title(tmux_server):
    """``curl`` of the exporter's /metrics for a log whose server_args carry OSC title sequences
    (in model_path, the draft path and the config label values are made of): the label values
    are sanitised, so the terminal's title stays as it was (the first test shows these bytes do
    set it when printed raw)."""
    if shutil.which("curl") is None:
        missing("curl is not installed")
    from _ssh_util import free_port

    tmux = tmux_server
    log = tmux.tmp / "hostile.log"
    model = f"meta-llama/Llama{OSC0}-3.1{TITLE}"
    lines = [server_args(DRAFT).replace("meta-llama/Llama-3.1-8B-Instruct", model)]
    lines += [decode(i) for i in range(5)]
    log.write_text("\n".join(lines) + "\n")
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui", "export", "--quiet", "--prometheus", f"127.0.0.1:{port}", str(log)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:

        def served() -> str:
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    text = r.read().decode()
            except OSError:
                return ""
            return text if 'model="meta-llama/Llama' in text else ""

        body = wait_until(served, what="/metrics with the model's label")
        assert "\x1b" not in body and "\x07" not in body  # what curl will print: no escape left
        waited = tmux.start("true")  # the terminal's own title first
        wait(lambda: waited.exists() and waited.read_text().strip(), "the shell to start", tmux)
        before = tmux.title()
        assert before and "pwned" not in before
        exit_file = tmux.tmp / "curl.exit"
        tmux(
            "respawn-pane",
            "-k",
            "-t",
            "t",
            f"curl -s {shlex.quote(url)}; echo EXIT=$? > {exit_file}; sleep 60",
        )
        wait(lambda: exit_file.exists() and exit_file.read_text().strip(), "curl to end", tmux)
        assert exit_file.read_text().strip() == "EXIT=0"
        assert "specwatch_records_total" in tmux.screen() or "meta-llama" in tmux.screen()
        assert tmux.title() == before and "pwned" not in tmux.title(), tmux.title()
        assert tmux.buffers() == ""
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
