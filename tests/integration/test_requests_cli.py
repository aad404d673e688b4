"""Per-request acceptance in ``specwatch summary``: the JSON on the fixtures and one text line per segment (the CLI as a subprocess)."""

from __future__ import annotations

import pytest
from _cli_util import ROOT, run_cli, summary_json

FIX = ROOT / "tests" / "fixtures" / "formats"


def test_summary_json_on_fixtures():
    d = summary_json(str(FIX / "sglang_finish.log"), str(FIX / "sglang_finish_variants.log"))
    a, b = (s["requests"] for s in d["sources"])
    assert a["n"] == 1 and a["step_histogram"] == [4, 0, 2, 2, 22]
    assert a["accept_len"]["p50"] == pytest.approx(4.2667, abs=1e-4)
    assert b["n"] == 3 and b["step_histogram"] == [6, 9, 11, 14]
    acc = b["accept_len"]
    assert (acc["mean"], acc["p10"], acc["p50"], acc["p90"]) == pytest.approx(
        (3.058333, 2.86, 3.0, 3.28), abs=1e-5
    )
    assert d["sources"][0]["segments"][0]["requests"]["n"] == 1


def test_summary_text_has_one_line_per_segment_with_requests():
    run = run_cli(
        "summary",
        str(FIX / "sglang_finish.log"),
        env={"COLUMNS": "200"},  # the line is checked whole, not wrapped to a terminal
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    lines = [x for x in out.splitlines() if "requests: n" in x]
    assert lines == [
        "    seg 0 requests: n 1, accept len mean 4.27  p10 4.27  p50 4.27  p90 4.27;"
        " steps accepting 0..k drafts [4, 0, 2, 2, 22]"
    ]
