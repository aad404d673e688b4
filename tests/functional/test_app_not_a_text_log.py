"""``watch`` of a binary file (``watch /bin/ls``) says "not a text log" in the pane's status, never
``live`` (issue 31 item 4); a text log beside it stays live."""

from __future__ import annotations

import shutil

from _tui_util import _isolated_config, live_app, screen_text, wait_for  # noqa: F401

from tui.core.pipeline.driver import Driver
from tui.core.sources.base import LineBatch


def _batch(lines: list[str]) -> LineBatch:
    return LineBatch("x", lines, list(range(len(lines))), 1)


def test_the_driver_says_binary_input_is_not_a_text_log() -> None:
    raw = open(shutil.which("ls") or "/bin/ls", "rb").read(16384)
    d = Driver("ls")
    d.parse(_batch(raw.decode("utf-8", "replace").split("\n")))
    assert d.status == "error" and "not a text log" in d.status_message and d.error
    d.parse(_batch(["[2026-01-01 00:00:00] plain text"] * 50))
    assert d.status == "error"  # it stays said
    text = Driver("log")
    text.parse(_batch(["[2026-01-01 00:00:00] a line with \x1b[31mcolour\x1b[0m and a tab\t"] * 200))
    assert text.status == "live" and text.error is None


async def test_watch_of_a_binary_file_says_not_a_text_log(tmp_path) -> None:
    binary = tmp_path / "ls"
    shutil.copy(shutil.which("ls") or "/bin/ls", binary)
    app = live_app(binary, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.screen.states[0].status == "error", "the binary file's status")
        await wait_for(pilot, lambda: "not a text log" in screen_text(app), "the status on the screen")
