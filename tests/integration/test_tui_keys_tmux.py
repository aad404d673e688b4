"""Every key in the help, sent as the bytes a real terminal sends (xterm, tmux, the Linux console),
into the real CLI in tmux (``send-keys -H``: raw bytes, not key names), each checked by its effect
on the screen (``capture-pane``). The keys come from the one list in tui/screens/keys.py: a key
added there without its bytes and its effect here fails this test.

With CI=true a missing tmux fails (CI installs it); elsewhere the test is skipped.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from _tmux_util import capture, quit_and_wait, wait_screen
from _wait import wait_until

from tui.screens.keys import ALL_KEYS

ROOT = Path(__file__).parent.resolve().parent.parent
SAMPLES = ROOT / "sample_logs"

# Textual key name -> what terminals send for it: (terminal, hex bytes). Where xterm, tmux and the
# Linux console differ, each one's bytes are sent and checked.
SEQUENCES: dict[str, list[tuple[str, str]]] = {
    "space": [("all", "20")],
    "plus": [("all", "2b")],
    "equals_sign": [("all", "3d")],
    "minus": [("all", "2d")],
    "left_square_bracket": [("all", "5b")],
    "right_square_bracket": [("all", "5d")],
    "n": [("all", "6e")],
    "m": [("all", "6d")],
    "c": [("all", "63")],
    "less_than_sign": [("all", "3c")],
    "greater_than_sign": [("all", "3e")],
    "o": [("all", "6f")],
    "l": [("all", "6c")],
    "slash": [("all", "2f")],
    "ctrl+f": [("all", "06")],
    "w": [("all", "77")],
    "f3": [("xterm, tmux", "1b 4f 52"), ("linux console", "1b 5b 5b 43")],
    "f4": [("xterm, tmux", "1b 4f 53"), ("linux console", "1b 5b 5b 44")],
    # shift+F3 as terminals with CSI-~ modifiers send it; xterm and tmux send ESC[1;2R, which
    # Textual 8 reads as a cursor-position report, and the Linux console ESC[28~ (read as ctrl+\\):
    # F4 is the newer-hit key every terminal can send
    "shift+f3": [("CSI 13;2 ~", "1b 5b 31 33 3b 32 7e")],
    "g": [("all", "67")],
    "pageup": [("all", "1b 5b 35 7e")],
    "pagedown": [("all", "1b 5b 36 7e")],
    "end": [("xterm", "1b 5b 46"), ("tmux, linux console", "1b 5b 34 7e")],
    "e": [("all", "65")],
    "z": [("all", "7a")],
    "enter": [("all", "0d")],
    "tab": [("all", "09")],
    "shift+tab": [("all", "1b 5b 5a")],
    "q": [("all", "71")],
    "question_mark": [("all", "3f")],
    "t": [("all", "74")],
    "s": [("all", "73")],
    "ctrl+c": [("all", "03")],
    "left_curly_bracket": [("all", "7b")],
    "right_curly_bracket": [("all", "7d")],
    "shift+left": [("xterm, tmux", "1b 5b 31 3b 32 44")],
    "shift+right": [("xterm, tmux", "1b 5b 31 3b 32 43")],
}
ESC = "1b"
BACK = r"([\d,]+) lines back \(End: follow\)"
ONLY_A, ONLY_B = "only pane A shown", "only pane B shown"  # maximised: one pane's header
FEWER_BACK = "fewer lines back"  # PgDn: the log tail fewer lines back than before it

# action -> (bytes sent first, the pattern the key brings on the screen (or takes off it, "!"),
# bytes sent after it to undo it). None: checked on its own below (q).
EFFECTS: dict[str, tuple[list[str], str, list[str]] | None] = {
    "pause": ([], r"replay paused|replay resumed", []),
    "faster": ([], r"replay speed as fast as possible", []),
    "slower": ([], r"replay speed 1000×", []),
    "segment(-1)": ([], r"showing segment 0 of the replay read", []),
    "segment(1)": ([], r"showing segment 0 of the replay read", []),
    "restart_mark": ([], r"1  12:16:29  \(restarted\)", []),  # a segment at ab_a's last time
    "add_mark": ([], r"mark M\d at \d\d:\d\d:\d\d by the log's clock", []),
    # c in compare: the panes take the height with their charts, the overlay under them
    "toggle_chart": ([], r"accept len, last [\d,]+ records \(x: time by the log's clock", ["63"]),
    "chart_window(1)": ([], r"charts: everything", []),
    "chart_window(-1)": ([], r"charts: the last 1,500 records", []),
    "chart_pan(1)": ([], r"charts: records [\d,]+–[\d,]+, panned", []),
    "chart_pan(-1)": ([], r"charts: (records [\d,]+–[\d,]+, panned|the newest records again)", []),
    "toggle_overlay": ([], r"!both on one axis", ["6f"]),
    "toggle_log": ([], r"log tails shown|no room for", []),
    "filter": ([], r"filter the log tail \(text", [ESC]),
    "find": ([], r"find in the log tail \(Enter", [ESC]),
    "toggle_wrap": ([], r"log tail: (long lines wrapped|one row per line)", []),
    "find_next(1)": ([], r"ctrl\+f first", []),
    "find_next(-1)": ([], r"ctrl\+f first", []),
    "goto": ([], r"go to a line number or a time", [ESC]),
    "scroll_log(1)": ([], r"[\d,]+ lines back \(End: follow\)", ["1b 5b 34 7e"]),
    "scroll_log(-1)": (["1b 5b 35 7e"], FEWER_BACK, ["1b 5b 34 7e"]),
    "scroll_log(0)": (["1b 5b 35 7e"], r"!lines back \(End: follow\)", []),
    "export": ([], r"records written to", []),
    "zoom": ([], ONLY_A, ["7a"]),
    "focus_pane(1)": ([], ONLY_B, []),  # z (sent after the key) maximises the pane focused
    "focus_pane(-1)": ([], ONLY_A, []),
    "quit": None,
    "interrupt": None,  # ctrl+c ends the app: tests/integration/test_tmux_jumps_interrupt.py
    "help": ([], r"what it does", [ESC]),
    "pick_theme": ([], r"Theme — Enter keeps it, Esc cancels", [ESC]),
    "screenshot": ([], r"screenshot saved", []),
}
AFTER = {"focus_pane(1)": "7a", "focus_pane(-1)": "7a"}  # sent after the key, before the check
UNDO_AFTER = {"zoom": [], "focus_pane(1)": ["7a"], "focus_pane(-1)": ["7a"]}  # then: both panes again


def send(name: str, hexes: str) -> None:
    subprocess.run(["tmux", "send-keys", "-t", name, "-H", *hexes.split()], check=True)


def shown(name: str, pattern: str) -> bool:
    return re.search(pattern, capture(name)) is not None


def wait_gone(name: str, pattern: str) -> None:
    wait_until(lambda: not shown(name, pattern), what=f"{pattern!r} gone", show=lambda: "\n" + capture(name))


def a_border(name: str) -> str | None:
    """The colour codes of pane A's left border on the panes' header row (a focused pane's border
    has the theme's primary colour): focus seen on the screen."""
    raw = subprocess.run(["tmux", "capture-pane", "-e", "-p", "-t", name], capture_output=True).stdout
    for line in raw.decode(errors="replace").splitlines():
        plain = re.sub(r"\x1b\[[0-9;]*m", "", line)
        if "ab_a.log" in plain and "ab_b.log" in plain and plain.startswith("│ ●"):
            m = re.match(r"((?:\x1b\[[0-9;]*m)*)│", line)
            return m.group(1) if m else None
    return None


def lines_back(name: str) -> int | None:
    m = re.search(BACK, capture(name))
    return int(m.group(1).replace(",", "")) if m else None


def check(name: str, action: str, hexes: str) -> None:
    """Send the key's bytes (after the ones it needs first) and wait for its effect."""
    effect = EFFECTS[action]
    assert effect is not None
    before, pattern, undo = effect
    for b in before:
        send(name, b)
        if b == "6f":  # the overlay hidden
            wait_gone(name, r"both on one axis")
        else:
            wait_screen(name, BACK)
    if pattern in (ONLY_A, ONLY_B):
        one, other = ("ab_a", "ab_b") if pattern == ONLY_A else ("ab_b", "ab_a")
        wait_until(
            lambda: len(re.findall(r"● (?:[AB] )?ab_.\.log", capture(name))) == 2, what="both panes shown"
        )
        before_border = wait_until(lambda: a_border(name), what="pane A's border")
        send(name, hexes)
        if action in AFTER:  # once the focus has moved (a focus is applied after the key)
            wait_until(lambda: a_border(name) not in (None, before_border), what="the focus moved")
            send(name, AFTER[action])
        wait_until(
            lambda: (
                re.search(rf"● (?:[AB] )?{one}\.log", t := capture(name)) is not None
                and re.search(rf"● (?:[AB] )?{other}\.log", t) is None
            ),
            what=pattern,
            show=lambda: "\n" + capture(name),
        )
    elif pattern == FEWER_BACK:
        back = wait_until(lambda: lines_back(name), what="scrolled back", show=lambda: "\n" + capture(name))
        send(name, hexes)
        wait_until(lambda: (lines_back(name) or 0) < back, what="fewer lines back after PgDn")
    elif pattern.startswith("!"):
        send(name, hexes)
        wait_gone(name, pattern[1:])
    else:
        wait_gone(name, pattern)  # a toast of the same words from the key before has gone
        send(name, hexes)
        if action in AFTER:
            send(name, AFTER[action])
        wait_screen(name, pattern)
    for u in undo + UNDO_AFTER.get(action, []):
        send(name, u)
        if u == ESC:  # closed before the next bytes come (ESC and a key would read as alt+key)
            wait_gone(name, pattern)
        elif u == "6f":
            wait_screen(name, r"both on one axis")
    if action in UNDO_AFTER:  # restored before the next key
        wait_until(
            lambda: len(re.findall(r"● (?:[AB] )?ab_.\.log", capture(name))) == 2, what="both panes again"
        )


def test_every_key_in_the_help_has_its_terminal_bytes_and_an_effect():
    names = {k for key in ALL_KEYS for k in key.keys.split(",")}
    assert names <= set(SEQUENCES), f"keys without terminal bytes here: {sorted(names - set(SEQUENCES))}"
    assert {key.action for key in ALL_KEYS} <= set(EFFECTS)


def test_real_escape_sequences_of_every_key_work_in_tmux(tmux, tmp_path):
    a, b = SAMPLES / "ab_a.log", SAMPLES / "ab_b.log"
    out = tmp_path / "out"
    out.mkdir()
    name, exit_file = tmux(
        ["replay", "--max", "--save-dir", str(out), str(a), str(b)], tmp_path, size=(160, 45)
    )
    wait_screen(name, r"records  ended(?s:.*)records  ended")
    checked = []
    first = ("focus_pane(1)", "focus_pane(-1)")  # the panes' focus before the inputs take it
    for key in sorted(ALL_KEYS, key=lambda k: k.action not in first):
        if key.action in ("quit", "interrupt"):
            continue
        for keyname in key.keys.split(","):
            for terminal, hexes in SEQUENCES[keyname]:
                check(name, key.action, hexes)
                checked.append((keyname, terminal))
    assert len(checked) >= len(ALL_KEYS)
    assert {(k, t) for k, ts in SEQUENCES.items() for t, _ in ts if k not in ("q", "ctrl+c")} == set(checked)
    assert list(out.glob("specwatch-records-*.csv")) and list(out.glob("*.svg"))  # e and s wrote
    assert quit_and_wait(name, exit_file) == "EXIT=0"  # q, sent as its byte by quit_and_wait
