"""The pooled estimator named in summary's JSON and text (the CLI as a subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_util import run_cli
from _scan_util import vllm_line


def test_summary_json_and_text_name_the_estimator(tmp_path):

    root = Path(__file__).parent.resolve().parents[1]
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_text("".join(vllm_line(i, 2.80, 300) for i in range(60)))
    b.write_text(
        "".join(vllm_line(i, 2.60 if i % 2 == 0 else 3.33, 600 if i % 2 == 0 else 6) for i in range(60))
        + vllm_line(61, 2.0, 100).replace("Mean acceptance length: 2.00", "Mean acceptance length: 9.00")
    )

    def run(*args):
        # run_cli drops pytest's inherited COLUMNS=80 (set by readline): whole lines into a pipe
        out = run_cli("summary", *args, cwd=root)
        assert out.returncode == 0, out.stderr
        return out.stdout

    d = json.loads(run("--json", str(a), str(b)))
    sb = d["sources"][1]
    assert sb["accept_len"]["mean"] == pytest.approx((2.60 + 3.33) / 2, abs=0.01)  # kept for scripts
    assert set(sb["accept_len"]["pooled"]) >= {"value", "ci95", "drafts", "accepted"}
    assert d["comparison"]["accept_len"]["estimator"] == "pooled"
    assert d["comparison"]["accept_len"]["verdict"] == "lower"
    refused = [x for x in sb["segments"][0]["diagnostics"] if x["code"] == "values_refused"]
    assert refused[0]["out_of_range"] == {"accept_len": 1} and refused[0]["example"]["line"] == 61
    text = run(str(a), str(b))
    assert "accept len B − A:" in text and "[pooled counts]" in text
    assert "warning: values left out of the statistics: 1 accept len out of range — e.g. line 61" in text
