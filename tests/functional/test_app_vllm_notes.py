"""What a vLLM log says of itself, in the app as in ``summary``: a server that will print no
acceptance line says why (the multi-API-server warning), and a pooled length whose drafts came
from the printed means says so (docs/formats.md, "Drafts when the draft length varies")."""

from __future__ import annotations

from pathlib import Path

from _tui_util import _isolated_config, screen_text, wait_ended, wait_for  # noqa: F401

from tui.app import SpecwatchApp
from tui.cli import build_parser
from tui.cli.tui_commands import _replay_plan

REL = Path(__file__).parent.parent / "fixtures" / "formats" / "releases"


def _app(name: str) -> SpecwatchApp:
    return SpecwatchApp(_replay_plan(build_parser().parse_args(["replay", "--max", str(REL / name)])))


async def test_the_stats_logging_warning_says_why_no_line_comes():
    app = _app("vllm-0.33.0-api-servers.log")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ended(pilot)
        await wait_for(pilot, lambda: "vLLM stats logging is off" in screen_text(app))
        text = " ".join(screen_text(app).split())
        assert "--api-server-count 1" in text
        assert "no accept len values yet" not in text
    small = _app("vllm-0.33.0-api-servers.log")
    async with small.run_test(size=(80, 24)) as pilot:  # the compact pane: what, before the aside
        await wait_ended(pilot)
        await wait_for(
            pilot,
            lambda: "vLLM stats logging is off: no SpecDecoding metrics line will come" in screen_text(small),
        )


async def test_drafts_from_the_printed_means_are_said_next_to_the_pooled_length():
    app = _app("vllm-0.33.0-dynamic.log")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ended(pilot)
        await wait_for(pilot, lambda: "drafts from the printed means" in screen_text(app))
        assert "the draft length varies" in screen_text(app)
        fixed = _app("vllm-0.33.0.log")
    async with fixed.run_test(size=(100, 30)) as pilot:
        await wait_ended(pilot)
        await wait_for(pilot, lambda: "pooled 1+Σaccepted/Σdrafts" in screen_text(fixed))
        assert "printed means" not in screen_text(fixed)
