"""The real CLI in a real terminal: tmux at 160x45, read with capture-pane, quit with q.

With CI=true a missing tmux fails (CI installs it); elsewhere the test is skipped.
"""

from __future__ import annotations

from pathlib import Path

from _tmux_util import quit_and_wait, wait_screen

from tui.core.pipeline.whole import summarize_file

ROOT = Path(__file__).parent.resolve().parent.parent
SAMPLES = ROOT / "sample_logs"


def test_replay_max_shows_labels_and_means_then_q_exits_0(tmux, tmp_path):
    a, b = SAMPLES / "ab_a.log", SAMPLES / "ab_b.log"
    name, exit_file = tmux(["replay", "--max", str(a), str(b)], tmp_path, size=(160, 45))
    means = [summarize_file(str(p), workers=1).stats.total.accept_len.mean for p in (a, b)]
    # Both files read to their end, each one's mean accept len on screen, to two decimals, and the
    # B − A bar drawn from the whole of both (the ended sources are drawn at once, not at the cadence)
    screen = wait_screen(
        name,
        r"B higher(?s:.*)records  ended(?s:.*)records  ended(?s:.*)"
        + "(?s:.*)".join(rf"segment {m:.2f} ± \d\.\d\d \(n=\d+\)" for m in means),
    )
    assert len(screen.splitlines()) == 45 and max(len(l) for l in screen.splitlines()) <= 160
    assert "ab_a.log" in screen and "ab_b.log" in screen
    assert quit_and_wait(name, exit_file) == "EXIT=0"


def test_no_arguments_starts_the_demo(tmux, tmp_path):
    name, exit_file = tmux([], tmp_path, size=(160, 45))
    screen = wait_screen(name, r"replaying 20×")
    assert "broken" in screen and "fixed" in screen and "B − A" in screen
    assert quit_and_wait(name, exit_file) == "EXIT=0"
