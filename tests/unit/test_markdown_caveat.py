"""The Markdown headline of a log with several segments carries the text output's caveat (issue 31
item 8): the mean over every segment mixes different runs."""

from __future__ import annotations

from pathlib import Path

from tui.cli.summary import _clean
from tui.cli.summary_markdown import render
from tui.cli.summary_text import render as render_text
from tui.core.model.summary import Summary
from tui.core.pipeline.whole import summarize_file

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
CAVEAT = "segments together (different runs mixed: compare the segments)"


def _out(name: str) -> Summary:
    s = summarize_file(str(SAMPLES / name), name, workers=1)
    return Summary.of(_clean([{**s.result(), "segment_comparison": None, "warnings": []}]), None)


def test_the_markdown_headline_says_when_it_mixes_segments() -> None:
    mixed = _out("sglang_eagle3_restart.log")
    assert len(mixed.sources[0].segments) == 2
    md = render(mixed)
    assert f"All 2 {CAVEAT}:" in md
    assert md.index(CAVEAT) < md.index("| accept len |")  # said before the mean, as the text does
    assert CAVEAT in render_text(mixed)
    one = render(_out("ab_a.log"))
    assert CAVEAT not in one
