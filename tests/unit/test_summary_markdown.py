"""``summary --format markdown``'s renderer: escaping of outside text, table shape, verdicts."""

from __future__ import annotations

import copy
import functools
from pathlib import Path

from tui.cli.summary import _clean
from tui.cli.summary_markdown import md, md_table, render
from tui.cli.summary_text import SEG_HEADER
from tui.core.model.summary import Summary
from tui.core.pipeline.whole import summarize_file
from tui.core.stats import SourceStats
from tui.core.stats.verdicts import comparison

SAMPLES = Path(__file__).parent.resolve().parents[1] / "sample_logs"


@functools.cache
def _read(name: str) -> tuple[dict, SourceStats]:
    s = summarize_file(str(SAMPLES / name), name, workers=1)
    return s.result(), s.stats


def _source(label: str, source: str, warnings: list[str] | None = None, name: str = "ab_a.log") -> dict:
    """A real source's summary (``name``) with the label, path, warnings and first segment's label
    given (text from outside, to be escaped)."""
    d = copy.deepcopy(_read(name)[0])
    d.update(label=label, source=source, warnings=warnings or [], segment_comparison=None)
    d["segments"][0]["label"] = "EAGLE3 | steps=3"
    return d


def _summary(sources: list[dict], comparison: dict | None = None) -> Summary:
    return Summary.of(_clean(sources), _clean(comparison))


def test_md_escapes_markdown_and_shows_controls():
    assert md("a|b`c<d*e_f[g]h") == r"a\|b\`c\<d\*e\_f\[g\]h"
    assert md("x\x1b[31m\ny") == r"x␛\[31m␊y"
    assert md("\\") == "\\\\"
    assert md("plain words 1.5") == "plain words 1.5"


def test_md_table_has_one_cell_per_column_whatever_the_text():
    lines = md_table(["a", "b|c"], [["x|y", "`z`"]])
    assert lines[1] == "|---|---|"
    for ln in lines:  # an unescaped | would split a cell
        assert ln.replace("\\|", "").count("|") == 3, ln


def test_render_sources_segments_and_comparison():
    c = comparison(_read("ab_a.log")[1], _read("ab_b.log")[1])
    c["a"]["label"] = "[a](http://x)"
    c["b"]["label"] = "b"
    c["accept_len"].update(diff=0.25, ci95=[0.1, 0.4], verdict="higher", estimator="pooled")
    out = _summary(
        [_source("[a](http://x)", "/logs/a_1.log"), _source("b", "/logs/b.log", name="ab_b.log")], c
    )
    text = render(out)
    assert text.startswith("## specwatch summary\n") and text.endswith("\n")
    assert r"### \[a\](http://x) (/logs/a\_1.log)" in text
    assert "| " + " | ".join(md(h) for h in SEG_HEADER) + " |" in text
    assert r"| 0 | server\_args | 2026-11-20 12:00:01 | EAGLE3 \| steps=3 | 1524 |" in text
    assert "| accept len | +0.25 (95% CI +0.10 … +0.40): B is higher \\[pooled counts\\] |" in text
    assert "A = \\[a\\](http://x) (segment 0), B = b (segment 0)" in text


def test_render_warnings_and_no_comparison():
    text = render(_summary([_source("x", "x.bin", ["x.bin does not look like a text log"])]))
    assert "> **warning:** x.bin does not look like a text log" in text
    assert "B − A" not in text


def test_render_warns_when_there_is_no_acceptance():
    src = _source("x", "x.log")
    for d in (src, src["segments"][0]):  # the records carry no acceptance: nothing measured
        d["accept_len"].update(n=0, mean=None, ci95=None, pooled=None)
        d["accept_rate"].update(n=0, mean=None, ci95=None, pooled=None)
    text = render(_summary([src]))
    assert "> **warning:** no speculative-decoding metric found" in text
