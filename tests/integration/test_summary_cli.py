"""`specwatch summary` as a user runs it: a subprocess, real files, stdin, errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from _cli_util import run_cli

ROOT = Path(__file__).parent.resolve().parents[1]
SAMPLES = ROOT / "sample_logs"


def run(*args: str, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_cli(*args, input=stdin, env=env, text=False)


def test_ab_samples_compare_higher():
    out = run("summary", "--json", f"A={SAMPLES / 'ab_a.log'}", f"B={SAMPLES / 'ab_b.log'}")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert [s["label"] for s in d["sources"]] == ["A", "B"]
    c = d["comparison"]["accept_len"]
    assert c["verdict"] == "higher"
    lo, hi = c["ci95"]
    assert lo < c["diff"] < hi and lo > 0
    assert c["diff"] == pytest.approx(
        d["sources"][1]["accept_len"]["mean"] - d["sources"][0]["accept_len"]["mean"]
    )
    # The two servers print the rate with the same definition but different D: rates are not comparable as printed.
    assert d["comparison"]["accept_rate"]["definitions"] == ["accepted_drafts_over_proposed_drafts"] * 2


def test_restart_sample_has_two_segments_and_a_verdict():
    d = json.loads(run("summary", "--json", str(SAMPLES / "sglang_eagle3_restart.log")).stdout)
    src = d["sources"][0]
    segs = src["segments"]
    assert [s["reason"] for s in segs] == ["server_args", "server_args"]
    assert segs[0]["accept_len"]["mean"] < 1.6 < 2.2 < segs[1]["accept_len"]["mean"]
    assert segs[0]["config"]["draft_model_path"] != segs[1]["config"]["draft_model_path"]
    assert src["segment_comparison"]["verdict"] == "higher"
    assert src["segment_comparison"]["segments"] == [0, 1]


def test_text_table_is_readable():
    out = run("summary", str(SAMPLES / "sglang_eagle3_restart.log"), str(SAMPLES / "vllm_v1_eagle3.log"))
    assert out.returncode == 0
    text = out.stdout.decode()
    assert "accept len" in text and "server_args" in text and "EAGLE3 steps=3 topk=1 ndt=4" in text
    assert "last two segments (0 → 1)" in text and "B is higher" in text
    assert "per-position acceptance: 0.799, 0.585, 0.412" in text


def test_stdin_and_labels():
    data = (SAMPLES / "ab_a.log").read_bytes()
    out = run("summary", "--json", "mine=-", stdin=data)
    assert out.returncode == 0, out.stderr
    src = json.loads(out.stdout)["sources"][0]
    assert (src["label"], src["source"]) == ("mine", "-")
    direct = json.loads(run("summary", "--json", str(SAMPLES / "ab_a.log")).stdout)["sources"][0]
    assert src["accept_len"] == direct["accept_len"]


@pytest.mark.parametrize(
    "args,message",
    [
        (["summary", "/nonexistent/x.log"], "no such file"),
        (["summary", "."], "is a directory"),
        (["summary"], "the following arguments are required"),
        (["summary", "--bogus", "x"], "unrecognized arguments"),
        (["summary", "-", "-"], "stdin (-) can be read only once"),
    ],
)
def test_errors_are_one_line(args, message):
    out = run(*args)
    assert out.returncode == 2
    err = out.stderr.decode().strip()
    assert message in err and "\n" not in err and "Traceback" not in err
    assert out.stdout == b""
