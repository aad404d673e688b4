"""Labels from paths in the app (issue 31 item 1): a compare of ``blue/server.log`` and
``green/server.log`` names both by the part of the path that tells them apart, in the pane headers,
the B − A bar and the verdict, at every size; never ``server.log (2)``."""

from __future__ import annotations

import shutil

import pytest
from _tui_util import _isolated_config, finished, sample, screen_text  # noqa: F401

from tui.app import SpecwatchApp
from tui.cli import build_parser
from tui.cli.tui_commands import _replay_plan


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 45), (200, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_compare_of_two_server_logs_names_them_by_their_folders(tmp_path, monkeypatch, size) -> None:
    for run, src in (("blue", "ab_a.log"), ("green", "ab_b.log")):
        (tmp_path / run).mkdir()
        shutil.copy(sample(src), tmp_path / run / "server.log")
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["replay", "--max", "blue/server.log", "green/server.log"])
    plan = _replay_plan(args)
    assert [p.label for p in plan.panes] == ["blue/server.log", "green/server.log"]
    app = SpecwatchApp(plan)
    async with app.run_test(size=size) as pilot:
        await finished(pilot)
        text = screen_text(app)
        assert "server.log (2)" not in text
        assert "blue" in text and "green" in text
        header_a = next(line for line in text.splitlines() if "● A" in line)
        header_b = next(line for line in text.splitlines() if "● B" in line)
        assert "blue" in header_a and "green" in header_b
