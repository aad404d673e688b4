"""The real CLI in a small real terminal (tmux at 80×24 and 100×30): two files whose names differ
only at the end are told apart in the pane headers, and each full record count is on the screen.

With CI=true a missing tmux fails (CI installs it); elsewhere the test is skipped.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tui.core.summary import summarize_file

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
LONG = "sglang-eagle3-llama-3.1-8b-instruct-tp2-run-"


@pytest.fixture
def tmux():
    if shutil.which("tmux") is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("tmux is required in CI (the smoke test runs the real CLI in it)")
        pytest.skip("tmux is not installed")
    sessions: list[str] = []

    def start(args: list[str], tmp: Path, size: tuple[int, int]) -> tuple[str, Path]:
        name = f"specwatch-test-{uuid.uuid4().hex[:8]}"
        exit_file = tmp / f"{name}.exit"
        cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "tui", *args])
        env = (
            f"cd {shlex.quote(str(tmp))} && unset COLUMNS LINES && XDG_CONFIG_HOME={shlex.quote(str(tmp / 'xdg'))} "
            f"PYTHONPATH={shlex.quote(str(ROOT))} TERM=xterm-256color"
        )
        script = f"{env} {cmd}; echo EXIT=$? > {shlex.quote(str(exit_file))}; sleep 60"
        w, h = size
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", name, "-x", str(w), "-y", str(h), script], check=True
        )
        sessions.append(name)
        return name, exit_file

    yield start
    for name in sessions:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def capture(name: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout


def wait_screen(name: str, pattern: str, timeout: float = 30.0) -> str:
    end = time.monotonic() + timeout
    text = ""
    while time.monotonic() < end:
        text = capture(name)
        if re.search(pattern, text):
            return text
        time.sleep(0.2)
    raise AssertionError(f"{pattern!r} never showed; the screen was:\n{text}")


def quit_and_wait(name: str, exit_file: Path, timeout: float = 10.0) -> str:
    subprocess.run(["tmux", "send-keys", "-t", name, "q"], check=True)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if exit_file.exists() and exit_file.read_text().strip():
            return exit_file.read_text().strip()
        time.sleep(0.1)
    raise AssertionError(f"no exit after q; the screen was:\n{capture(name)}")


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_replay_broken_vs_fixed_told_apart_in_a_small_terminal(tmux, tmp_path, size):
    broken, fixed = tmp_path / f"{LONG}broken.log", tmp_path / f"{LONG}fixed.log"
    broken.write_bytes((SAMPLES / "ab_a.log").read_bytes())
    fixed.write_bytes((SAMPLES / "ab_b.log").read_bytes())
    ns = [summarize_file(str(p), workers=1).stats.total.accept_len.n for p in (broken, fixed)]
    name, exit_file = tmux(["replay", "--max", broken.name, fixed.name], tmp_path, size)
    # read to the end: both headers say ended, and each file's full record count (the segment's
    # n: one segment each) is on the screen
    screen = wait_screen(name, r"(?s)B higher.*ended.*ended.*" + ".*".join(rf"\(n={n}\)" for n in ns))
    lines = screen.splitlines()
    assert len(lines) == size[1] and max(len(line) for line in lines) <= size[0]
    headers = [line for line in lines if "│ ● " in line]
    assert len(headers) == 1 and headers[0].count("ended") == 2, screen  # both panes' headers, side by side
    left, right = headers[0].split("││")
    assert "broken.log" in left and "fixed.log" in right, screen
    assert quit_and_wait(name, exit_file) == "EXIT=0"
