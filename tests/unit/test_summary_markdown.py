"""``summary --format markdown``'s renderer: escaping of outside text, table shape, verdicts."""

from __future__ import annotations

from tui.cli.summary_markdown import md, md_table, render
from tui.cli.summary_text import SEG_HEADER


def _stat(n: int = 0, mean: float | None = None) -> dict:
    return {"n": n, "mean": mean, "ci95": [mean - 0.1, mean + 0.1] if mean is not None else None}


def _source(label: str, source: str, warnings: list[str] | None = None) -> dict:
    seg = {
        "index": 0,
        "reason": "start",
        "label": "EAGLE3 | steps=3",
        "records": 10,
        "accept_len": _stat(10, 2.5),
        "accept_rate": _stat(),
    }
    return {
        "label": label,
        "source": source,
        "lines": 20,
        "records": 10,
        "malformed": 0,
        "family": "sglang",
        "accept_len": _stat(10, 2.5),
        "accept_rate": _stat(),
        "segments": [seg],
        "segment_comparison": None,
        "warnings": warnings or [],
    }


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
    out = {
        "sources": [_source("[a](http://x)", "/logs/a_1.log"), _source("b", "/logs/b.log")],
        "comparison": {
            "a": {"label": "[a](http://x)", "segment": 0},
            "b": {"label": "b", "segment": 0},
            "accept_len": {"diff": 0.25, "ci95": [0.1, 0.4], "verdict": "higher", "estimator": "pooled"},
        },
    }
    text = render(out)
    assert text.startswith("## specwatch summary\n") and text.endswith("\n")
    assert r"### \[a\](http://x) (/logs/a\_1.log)" in text
    assert "| " + " | ".join(md(h) for h in SEG_HEADER) + " |" in text
    assert r"| 0 | start | — | EAGLE3 \| steps=3 | 10 |" in text
    assert "| accept len | +0.25 (95% CI +0.10 … +0.40): B is higher \\[pooled counts\\] |" in text
    assert "A = \\[a\\](http://x) (segment 0), B = b (segment 0)" in text


def test_render_warnings_and_no_comparison():
    text = render(
        {"sources": [_source("x", "x.bin", ["x.bin does not look like a text log"])], "comparison": None}
    )
    assert "> **warning:** x.bin does not look like a text log" in text
    assert "B − A" not in text


def test_render_warns_when_there_is_no_acceptance():
    src = _source("x", "x.log")
    src["accept_len"] = _stat()
    src["segments"][0]["accept_len"] = _stat()
    text = render({"sources": [src], "comparison": None})
    assert "> **warning:** no speculative-decoding metric found" in text
