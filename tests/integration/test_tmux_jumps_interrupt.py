"""Keys pressed through a real terminal (tmux) into the real CLI (issue 31): ``[`` during a
replay jumps back without copying the log tail (``ctrl+f`` of a unique line finds one hit, F3
finds no older one, the line count is the file's); ``ctrl+c`` leaves as an interrupt does (one
line, exit status 130). With CI=true a missing tmux fails (CI installs it); elsewhere skipped."""

from __future__ import annotations

import subprocess
from pathlib import Path

from _tmux_util import capture, exit_status, wait_screen
from _wait import wait_until

ROOT = Path(__file__).parent.resolve().parent.parent
UNIQUE = "#token: 18468,"  # in one line of the log below (line 294)


def send(name: str, *hexes: str) -> None:
    subprocess.run(["tmux", "send-keys", "-t", name, "-H", *" ".join(hexes).split()], check=True)


def two_runs(tmp_path: Path) -> Path:
    """Two runs of the sample (a restart at line 301, the second run ~4 min by the log's clock)."""
    lines = (ROOT / "sample_logs" / "sglang_eagle3_restart.log").read_text().splitlines(keepends=True)
    path = tmp_path / "two-runs.log"
    path.write_text("".join(lines[:300] + lines[1723:2400]))
    return path


def test_a_jump_back_in_a_replay_then_ctrl_f_finds_one_hit(tmux, tmp_path):
    log = two_runs(tmp_path)
    total = len(log.read_text().splitlines())
    name, exit_file = tmux(["replay", "--speed", "20", "--max-gap", "1", log.name], tmp_path, size=(140, 40))
    wait_screen(name, r"segment\s+1 of 2")  # the playhead in the second run
    send(name, "5b")  # [
    wait_screen(name, r"replay jumps to the previous segment")
    wait_screen(name, rf"{total:,} lines · [\d,]+ records\s+ended")  # read again to the end: the file's count
    send(name, "06")  # ctrl+f
    wait_screen(name, r"find in the log tail")
    subprocess.run(["tmux", "send-keys", "-t", name, "-l", UNIQUE], check=True)
    send(name, "0d")
    wait_screen(name, r"find: #token: 18468,")
    send(name, "1b 4f 52")  # F3: an older line with it
    wait_screen(name, r"no older line contains '#token: 18468,'")
    assert "no line contains" not in capture(name)  # the newest one was found
    send(name, "03")  # ctrl+c
    status = wait_until(
        lambda: exit_status(exit_file), what="an exit after ctrl+c", show=lambda: capture(name)
    )
    assert status == "EXIT=130"
    screen = capture(name)
    assert "specwatch replay: interrupted" in screen and "Traceback" not in screen, screen
