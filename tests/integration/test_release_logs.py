"""Logs rendered through the servers' own format strings, release by release (issue 22): vLLM V0
0.4.1 / 0.6.3, V1 0.8.5 / 0.9.0 / 0.11.0 / 0.33.0, SGLang 0.4.3 / 0.5.2 / 0.5.23, llama.cpp (the
source bundled in llama-cpp-python 0.3.16 and 0.3.36). tools/render_release_logs.py read each format string
from the release's code and worked the expected values out of the counts it rendered
(tests/fixtures/formats/releases/expected.json, never from specwatch); ``summary --json`` must
give the true n, means, pooled values and segments of each."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from _cli_util import run_cli

REL = Path(__file__).parent.parent / "fixtures" / "formats" / "releases"
EXPECTED = json.loads((REL / "expected.json").read_text())


@pytest.fixture(scope="module")
def summaries() -> dict[str, dict]:
    names = sorted(n for n in EXPECTED if not EXPECTED[n].get("no_metrics"))
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
    [
        n
        for n in EXPECTED
        if n.startswith("vllm-0.")
        and not EXPECTED[n].get("dynamic")
        and not EXPECTED[n].get("aggregated")
        and EXPECTED[n]["segments"][0].get("accept_len_mean")
    ],
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


@pytest.mark.parametrize("name", ["vllm-0.4.1.log", "vllm-0.6.3.log", "vllm-0.8.5.log"])
def test_vllm_config_of_every_release(summaries, name):
    # 0.4 / 0.6: the engine's config line with its SpeculativeConfig(draft_model=..., num_spec_tokens=k)
    # repr; 0.8: "args: Namespace(... speculative_config={...})"
    s, exp = summaries[name], EXPECTED[name]
    for seg, e in zip(s["segments"], exp["segments"], strict=True):
        assert e["config"], "the fixture prints a config"
        for key, value in e["config"].items():
            assert seg["config"][key] == value, (key, seg["config"])
        assert (
            f"k={e['config']['num_speculative_tokens']}" in seg["label"]
            or seg["config"]["num_speculative_tokens"]
        )


def test_vllm_dynamic_speculation_pooled_from_the_printed_means(summaries):
    # vLLM 0.33 --speculative-config num_speculative_tokens_per_batch_size: drafts are shorter
    # than k, so drafted / k undercounts them (the pooled length came out 2.63 for a truth of 1.88)
    name = "vllm-0.33.0-dynamic.log"
    s, exp = summaries[name], EXPECTED[name]
    (seg,) = s["segments"]
    (e,) = exp["segments"]
    assert seg["records"] == e["records"]
    assert seg["accept_len"]["mean"] == pytest.approx(e["accept_len_mean"], abs=1e-9)
    pooled = seg["accept_len"]["pooled"]
    lo, hi = pooled["ci95"]
    assert lo <= e["pooled_accept_len"] <= hi
    # the means are printed to 0.01: their rounding is all the estimate lacks
    assert pooled["value"] == pytest.approx(e["pooled_accept_len"], abs=0.002)
    assert pooled["drafts"] == pytest.approx(e["drafts"], rel=0.005)
    assert "draft length varies" in pooled["method"] and "40 lines" in pooled["method"]
    assert seg["accept_rate"]["pooled"]["value"] == pytest.approx(e["pooled_accept_rate"], rel=1e-12)
    assert s["accept_len"]["pooled"]["method"]
    # a fixed k keeps drafted / k (no method said)
    assert all(
        g["accept_len"]["pooled"].get("method") is None
        for n in ("vllm-0.9.0.log", "vllm-0.11.0.log", "vllm-0.33.0.log")
        for g in summaries[n]["segments"]
    )


def test_vllm_aggregated_engines_and_iteration_lines(summaries):
    # two data-parallel engines with --aggregate-engine-logging: the stats line starts
    # "2 Engines Aggregated: ", each engine prints "Engine NNN: Iteration(N): ..." details, and the
    # spec line (no prefix) is the whole server's: one series, no ranks, nothing malformed
    name = "vllm-0.33.0-aggregated.log"
    s, exp = summaries[name], EXPECTED[name]
    (seg,) = s["segments"]
    (e,) = exp["segments"]
    assert s["malformed"] == 0 and seg["ranks"] is None
    assert seg["records"] == e["records"] and seg["accept_len"]["n"] == e["records"]
    assert seg["accept_len"]["mean"] == pytest.approx(e["accept_len_mean"], abs=1e-9)
    assert seg["accept_len"]["pooled"]["value"] == pytest.approx(e["pooled_accept_len"], rel=1e-12)
    assert seg["throughput"]["mean"] == pytest.approx(e["throughput_mean"], abs=1e-9)  # the aggregated line's


def test_vllm_stats_logging_disabled_says_why_no_line_comes():
    # vLLM >= 0.11 with --api-server-count > 1 makes no stat logger: the log will have no
    # SpecDecoding line, and the warning it prints says so
    path = REL / "vllm-0.33.0-api-servers.log"
    out = run_cli("summary", str(path))
    assert out.returncode != 0  # no metric: nothing for a gate to judge
    assert "--api-server-count > 1" in out.stderr and "/metrics" in out.stderr
    assert "seg 0 warning: vLLM stats logging is off: no SpecDecoding metrics line will come" in out.stdout
    js = run_cli("summary", "--json", str(path))
    (seg,) = json.loads(js.stdout)["sources"][0]["segments"]
    assert [d["code"] for d in seg["diagnostics"]] == ["server_note"]


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


def _spec_lines(name: str) -> list[str]:
    return [x for x in (REL / name).read_text().splitlines() if "SpecDecoding metrics: " in x][:5]


def _printed(lines: list[str]) -> list[float]:
    return [float(x.split("Mean acceptance length: ")[1].split(",")[0]) for x in lines]


@pytest.mark.parametrize("native", ["1", "0"])
def test_a_long_vllm_log_decides_its_era_once_from_its_lines(tmp_path, native):
    # 0.9.0's lines with a 0.8.5 line among every 200, far beyond one scanned chunk, no version
    # line: the segment is of the newest era by the weight of its lines; the 0.8.5 lines keep their
    # printed values (what grep | awk reads) and are counted, on both scanners
    old, new = _spec_lines("vllm-0.8.5.log"), _spec_lines("vllm-0.9.0.log")
    body = (new * 40 + old) * 100  # 20,500 lines, ~5 MB
    p = tmp_path / "mixed.log"
    p.write_text("\n".join(body) + "\n")
    out = run_cli("summary", "--json", str(p), env={"SPECWATCH_NATIVE": native})
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)["sources"][0]
    assert s["refused"]["out_of_range"] == {}
    assert s["accept_len"]["n"] == len(body)
    assert s["accept_len"]["mean"] == pytest.approx(statistics.fmean(_printed(body)), abs=1e-9)
    (seg,) = s["segments"]
    (era,) = [d for d in seg["diagnostics"] if d["code"] == "era_disagreement"]
    assert (era["era"], era["disagreeing"], era["lines"]) == ("V1", 500, len(body))
    assert era["level"] == "info" and era["read_before_settled"] == 0
    assert "no bonus token" not in seg["rate_definition"]["note"]


@pytest.mark.parametrize("native", ["1", "0"])
def test_a_long_vllm_0_8_log_without_its_version_line_gets_the_bonus_token(tmp_path, native):
    old = _spec_lines("vllm-0.8.5.log")
    body = old * 4000
    p = tmp_path / "old.log"
    p.write_text("\n".join(body) + "\n")
    out = run_cli("summary", "--json", str(p), env={"SPECWATCH_NATIVE": native})
    assert out.returncode == 0, out.stderr
    (seg,) = json.loads(out.stdout)["sources"][0]["segments"]
    assert seg["accept_len"]["n"] == len(body)
    assert seg["accept_len"]["mean"] == pytest.approx(statistics.fmean(_printed(body)) + 1, abs=1e-9)
    assert "no bonus token" in seg["rate_definition"]["note"]
    assert not [d for d in seg["diagnostics"] if d["code"] == "era_disagreement"]
