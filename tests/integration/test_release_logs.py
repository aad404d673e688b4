"""Logs rendered through the servers' own format strings, release by release (issue 22): vLLM V0
0.4.1 / 0.6.3, V1 0.8.5 / 0.9.0 / 0.11.0 / 0.33.0, SGLang 0.4.3 / 0.5.2 / 0.5.23, llama.cpp (the
source bundled in llama-cpp-python 0.3.16 and 0.3.36). tools/render_release_logs.py read each format string
from the release's code and worked the expected values out of the counts it rendered
(tests/fixtures/formats/releases/expected.json, never from specwatch); ``summary --json`` must
give the true n, means, pooled values and segments of each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_util import run_cli

REL = Path(__file__).parent.parent / "fixtures" / "formats" / "releases"
EXPECTED = json.loads((REL / "expected.json").read_text())


@pytest.fixture(scope="module")
def summaries() -> dict[str, dict]:
    names = sorted(EXPECTED)
    out = run_cli("summary", "--json", *(str(REL / n) for n in names))
    assert out.returncode == 0, out.stderr
    sources = json.loads(out.stdout)["sources"]
    assert len(sources) == len(names)
    return {Path(s["source"]).name: s for s in sources}


def test_every_release_fixture_names_its_release_and_format_strings():
    for name in EXPECTED:
        head = (REL / name).read_text().split("\n", 1)[0]
        assert head.startswith("# source: ") and "rendered by tools/render_release_logs.py" in head
        assert ".py:" in head or ".cpp:" in head  # file:line of the format strings


@pytest.mark.parametrize(
    "name",
    [n for n in EXPECTED if n.startswith("vllm-0.") and EXPECTED[n]["segments"][0].get("accept_len_mean")],
)
def test_vllm_v1_every_era_on_one_scale(summaries, name):
    s, exp = summaries[name], EXPECTED[name]
    assert s["refused"]["out_of_range"] == {} and s["malformed"] == 0  # no value of any era refused
    assert len(s["segments"]) == len(exp["segments"]) == 2
    for seg, e in zip(s["segments"], exp["segments"]):
        assert seg["records"] == e["records"]
        al = seg["accept_len"]
        assert al["n"] == e["records"]
        assert al["mean"] == pytest.approx(e["accept_len_mean"], abs=1e-9)  # with the bonus token
        assert al["pooled"]["value"] == pytest.approx(e["pooled_accept_len"], rel=1e-12)
        assert seg["accept_rate"]["pooled"]["value"] == pytest.approx(e["pooled_accept_rate"], rel=1e-12)
        note = seg["rate_definition"]["note"]
        assert ("no bonus token" in note) == e["no_bonus_token"]
        assert seg["config"]["version"] == exp["version"]


@pytest.mark.parametrize("name", ["vllm-0.4.1.log", "vllm-0.6.3.log"])
def test_vllm_v0_counters_differenced_per_run(summaries, name):
    s, exp = summaries[name], EXPECTED[name]
    assert len(s["segments"]) == 2  # the second "vLLM API server version" line: counters from zero
    for seg, e in zip(s["segments"], exp["segments"]):
        assert seg["records"] == e["records"]
        assert seg["accept_len_derived"]["mean"] == pytest.approx(e["accept_len_derived_mean"], rel=1e-12)
        assert seg["accept_len"]["pooled"]["value"] == pytest.approx(e["pooled_accept_len"], rel=1e-12)
        assert seg["accept_rate"]["pooled"]["value"] == pytest.approx(e["pooled_accept_rate"], rel=1e-12)
        assert seg["system_efficiency"]["last"] == e["system_efficiency_last"]


@pytest.mark.parametrize("name", ["sglang-0.4.3.log", "sglang-0.5.2.log", "sglang-0.5.23.log"])
def test_sglang_releases(summaries, name):
    s, exp = summaries[name], EXPECTED[name]
    (seg,) = s["segments"]
    (e,) = exp["segments"]
    assert seg["records"] == e["records"] and seg["accept_len"]["n"] == e["records"]
    assert seg["accept_len"]["mean"] == pytest.approx(e["accept_len_mean"], abs=1e-9)
    assert seg["accept_len"]["weighted_mean"] == pytest.approx(e["accept_len_weighted_mean"], abs=1e-9)
    assert seg["accept_len"]["pooled"] is None  # SGLang prints no counts
    for key, value in e["config"].items():  # the ServerArgs(...) dump and the 0.5.2x dict alike
        assert seg["config"][key] == value
    assert seg["rate_definition"]["printed_definition"] == e["printed_definition"]


def test_llamacpp_restart_by_startup_lines(summaries):
    name = "llamacpp-0.3.36-startup.log"
    s, exp = summaries[name], EXPECTED[name]
    assert [g["reason"] for g in s["segments"]] == ["llamacpp_start", "llamacpp_start"]
    for seg, e in zip(s["segments"], exp["segments"]):
        assert seg["config"]["version"] == "b6123"
        assert seg["accept_len"]["pooled"]["value"] == pytest.approx(e["pooled_accept_len"], rel=1e-12)
        assert seg["accept_rate"]["pooled"]["value"] == pytest.approx(e["pooled_accept_rate"], rel=1e-12)
        assert seg["tokens"]["accepted"] == e["accepted"] and seg["tokens"]["drafted"] == e["drafted"]
        assert seg["requests"]["n"] == e["requests"]
        assert seg["requests"]["accept_len"]["mean"] == pytest.approx(e["requests_accept_len_mean"], abs=1e-9)


def test_llamacpp_restart_without_startup_lines(summaries):
    name = "llamacpp-0.3.36-counter-reset.log"
    s, exp = summaries[name], EXPECTED[name]
    # the elapsed clock went back (0.0x again) at the new server's first per-request line; its
    # statistics counters went back too: one restart, one segment
    assert [g["reason"] for g in s["segments"]] == ["llamacpp_start", "clock_reset"]
    for seg, e in zip(s["segments"], exp["segments"]):
        assert seg["accept_len"]["pooled"]["value"] == pytest.approx(e["pooled_accept_len"], rel=1e-12)
        assert seg["accept_rate"]["pooled"]["value"] == pytest.approx(e["pooled_accept_rate"], rel=1e-12)
        assert (seg["tokens"]["accepted"], seg["tokens"]["drafted"]) == (e["accepted"], e["drafted"])
        assert seg["requests"]["n"] == e["requests"]


def test_llamacpp_2025_build_restart_and_old_form(summaries):
    name = "llamacpp-0.3.16.log"
    s, exp = summaries[name], EXPECTED[name]
    # "system info: n_threads = ..." at each start (the "build: N" line before it is too short a text
    # to be an anchor); the draft line of this era is a line of its own after the slot prefix
    assert [g["reason"] for g in s["segments"]] == ["llamacpp_start", "llamacpp_start"]
    for seg, e in zip(s["segments"], exp["segments"]):
        assert seg["records"] == e["records"] and seg["accept_rate"]["n"] == e["records"]
        assert seg["accept_rate"]["mean"] == pytest.approx(e["accept_rate_mean"], abs=1e-12)
        assert seg["accept_rate"]["pooled"]["value"] == pytest.approx(e["pooled_accept_rate"], rel=1e-12)
        assert seg["accept_len"]["pooled"] is None  # no statistics lines in this era: no verify steps
        assert (seg["tokens"]["accepted"], seg["tokens"]["drafted"]) == (e["accepted"], e["drafted"])


@pytest.mark.parametrize("native", ["1", "0"])
def test_a_long_vllm_0_8_log_read_fast_still_gets_the_bonus_token(tmp_path, native):
    # 0.9.0's lines (read by the scanners) with 0.8.5's among them, far beyond one scanned chunk:
    # every 0.8.5 line goes to the line parser, wherever it falls, on both scanners
    old = (REL / "vllm-0.8.5.log").read_text().splitlines()[2:7]
    new = (REL / "vllm-0.9.0.log").read_text().splitlines()[2:7]
    assert [line.split("Mean acceptance length: ")[1][:4] for line in old[:1]] != [
        line.split("Mean acceptance length: ")[1][:4] for line in new[:1]
    ]
    body = (new * 40 + old) * 100  # 20,500 lines, ~5 MB
    p = tmp_path / "mixed.log"
    p.write_text("\n".join(body) + "\n")
    out = run_cli("summary", "--json", str(p), env={"SPECWATCH_NATIVE": native})
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)["sources"][0]
    e = EXPECTED["vllm-0.9.0.log"]["segments"][0]
    assert s["refused"]["out_of_range"] == {}
    assert s["accept_len"]["n"] == len(body)
    assert s["accept_len"]["mean"] == pytest.approx(e["accept_len_mean"], abs=1e-9)  # one scale
    assert s["accept_len"]["pooled"]["value"] == pytest.approx(e["pooled_accept_len"], rel=1e-9)
