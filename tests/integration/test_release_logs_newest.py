"""The newest releases' fields, in logs rendered through each release's own logging code
(tools/render_release_logs.py; the expected values are worked out there from the counts fed in,
never from specwatch): llama.cpp form B with ``statistics`` lines (llama-cpp-python 0.3.28, one
slot and two), SGLang 0.5.23's ``cap len`` / ``block accept len``, and llama.cpp 0.3.36's
synthetic acceptance mode with its per-step trace lines (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_util import run_cli

REL = Path(__file__).parent.parent / "fixtures" / "formats" / "releases"
EXPECTED = json.loads((REL / "expected.json").read_text())
NAMES = [
    "llamacpp-0.3.28-1-slot.log",
    "llamacpp-0.3.28-2-slots.log",
    "sglang-0.5.23-dspark.log",
    "llamacpp-0.3.36-synthetic.log",
]


def _summary(*args: str, native: str = "1") -> dict:
    out = run_cli("summary", "--json", *args, env={"SPECWATCH_NATIVE": native})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def summaries() -> dict[str, dict]:
    sources = _summary(*(str(REL / n) for n in NAMES))["sources"]
    return {Path(s["source"]).name: s for s in sources}


def test_the_fixtures_name_their_release_code():
    for name in NAMES:
        head = (REL / name).read_text().split("\n", 1)[0]
        assert head.startswith("# source: ") and ("0.3.28" in head or "0.3.36" in head or "0.5.23" in head)
        assert ".py:" in head or ".cpp:" in head


@pytest.mark.parametrize("name", ["llamacpp-0.3.28-1-slot.log", "llamacpp-0.3.28-2-slots.log"])
def test_llamacpp_form_b_pooled_length_from_the_statistics(summaries, name):
    s, exp = summaries[name], EXPECTED[name]
    assert [g["reason"] for g in s["segments"]] == ["llamacpp_start", "llamacpp_start"]  # counters from 0
    for seg, e in zip(s["segments"], exp["segments"]):
        # 1 + Σ accepted / Σ verify steps: the cumulative counters differenced, whatever the slots
        assert seg["accept_len"]["pooled"]["value"] == pytest.approx(e["pooled_accept_len"], rel=1e-12)
        assert seg["accept_len"]["pooled"]["drafts"] == e["verify_steps"]
        assert seg["accept_rate"]["pooled"]["value"] == pytest.approx(e["pooled_accept_rate"], rel=1e-12)
        assert (seg["tokens"]["accepted"], seg["tokens"]["drafted"]) == (e["accepted"], e["drafted"])
        assert seg["accept_len"]["n"] == 0  # form B prints no length: none made up
        # a request's own length only where the difference holds its tokens alone
        req = seg["requests"]
        assert req["n"] == e["requests_alone"]
        if e["requests_alone"]:
            assert req["accept_len"]["mean"] == pytest.approx(e["requests_alone_accept_len_mean"], rel=1e-12)
    if EXPECTED[name]["slots"] == 2:
        assert all(e["requests_alone"] < e["requests"] for e in exp["segments"])  # the case is met


@pytest.mark.parametrize("native", ["1", "0"])
def test_sglang_cap_and_block_accept_len_are_series_of_their_own(native):
    name = "sglang-0.5.23-dspark.log"
    s = _summary(str(REL / name), native=native)["sources"][0]
    (e,) = EXPECTED[name]["segments"]
    (seg,) = s["segments"]
    assert s["malformed"] == 0 and s["refused"]["out_of_range"] == {}
    # the accept len is the printed accept len (a "block accept len" was once taken for it)
    assert seg["accept_len"]["mean"] == pytest.approx(e["accept_len_mean"], abs=1e-9)
    assert seg["accept_len"]["weighted_mean"] == pytest.approx(e["accept_len_weighted_mean"], abs=1e-9)
    for q in ("cap_len", "block_accept_len"):
        for where in (s, seg):
            assert where["more"][q]["n"] == e["records"]
            assert where["more"][q]["mean"] == pytest.approx(e[f"{q}_mean"], abs=1e-9)
    for key, value in e["config"].items():
        assert seg["config"][key] == value


def test_sglang_cap_series_in_text_and_markdown():
    name = "sglang-0.5.23-dspark.log"
    (e,) = EXPECTED[name]["segments"]
    text = run_cli("summary", str(REL / name))
    assert text.returncode == 0, text.stderr
    assert f"cap len (tokens/step)  {e['cap_len_mean']:.2f}" in text.stdout, text.stdout
    assert f"block accept len (tokens/step)  {e['block_accept_len_mean']:.2f}" in text.stdout
    md = run_cli("summary", "--format", "markdown", str(REL / name))
    assert md.returncode == 0, md.stderr
    assert f"| cap len (tokens/step) | {e['cap_len_mean']:.2f}" in md.stdout, md.stdout


def test_llamacpp_synthetic_run_is_marked_and_judged_by_nothing(summaries):
    name = "llamacpp-0.3.36-synthetic.log"
    s, exp = summaries[name], EXPECTED[name]
    assert s["synthetic"] is True
    assert any("SYNTHETIC acceptance in segment 0" in w for w in s["warnings"])
    assert [g.get("synthetic") for g in s["segments"]] == [True, None]  # the restart ends it
    for seg, e in zip(s["segments"], exp["segments"]):
        assert bool(seg.get("synthetic")) == e["synthetic"] == bool(seg["config"].get("synthetic"))
        assert seg["config"]["label"].startswith("SYNTHETIC") == e["synthetic"]
        assert seg["accept_len"]["mean"] == pytest.approx(e["accept_len_mean"], abs=1e-9)  # shown, as printed
        assert seg["accept_rate"]["pooled"]["value"] == pytest.approx(e["pooled_accept_rate"], rel=1e-12)
        # the trace lines (accepted N/M draft tokens, one per verify step) give the step histogram
        assert seg["requests"]["n"] == e["requests"]
        assert seg["requests"]["step_histogram"] == e["step_histogram"]
    assert s["segment_comparison"] is None  # the real run is never judged against the synthetic one


def test_a_synthetic_run_gives_no_ab_verdict_and_says_so_on_stderr():
    syn, real = str(REL / "llamacpp-0.3.36-synthetic.log"), str(REL / "llamacpp-0.3.36-startup.log")
    out = run_cli("summary", "--json", real, syn)
    assert out.returncode == 0, out.stderr
    assert "SYNTHETIC acceptance" in out.stderr
    # the synthetic log's newest segment is real: the A/B uses it, never the synthetic one
    d = json.loads(out.stdout)
    assert d["comparison"]["b"]["segment"] == 1


def _synthetic_run_only(tmp_path: Path) -> Path:
    lines = (REL / "llamacpp-0.3.36-synthetic.log").read_text().splitlines()
    second = next(i for i, line in enumerate(lines) if i > 1 and "print_info: build " in line)
    p = tmp_path / "synthetic-only.log"
    p.write_text("\n".join(lines[1:second]) + "\n")
    return p


def test_two_sources_one_all_synthetic_have_no_ab_verdict(tmp_path):
    syn, real = _synthetic_run_only(tmp_path), str(REL / "llamacpp-0.3.36-startup.log")
    d = json.loads(run_cli("summary", "--json", real, str(syn)).stdout)
    assert d["comparison"] is None and d["sources"][1]["synthetic"] is True


def test_no_alert_fires_on_synthetic_acceptance(tmp_path):
    syn = _synthetic_run_only(tmp_path)
    rule = "accept_len>1.0"  # every record of the run meets it: a real run would fire at once
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    out = run_cli("stream", "--no-follow", "--jsonl", "--alert", rule, str(syn), env=env)
    assert out.returncode == 0, out.stderr
    got = [json.loads(line) for line in out.stdout.splitlines()]
    records = [d for d in got if d["kind"] == "record"]
    assert records and "alert" not in [d["kind"] for d in got]
    assert all(d["extra"]["synthetic"] == "true" for d in records)  # each record says so
    text = run_cli("stream", "--no-follow", str(syn), env=env).stdout
    lines = [line for line in text.splitlines() if "accept_len=" in line]
    assert lines and all(line.endswith(" SYNTHETIC") for line in lines)
    real = run_cli(
        "stream", "--no-follow", "--jsonl", "--alert", rule, str(REL / "llamacpp-0.3.36-startup.log"), env=env
    )
    assert "alert" in [json.loads(line)["kind"] for line in real.stdout.splitlines()]  # the rule can fire


async def test_the_exporter_serves_cap_series_and_marks_synthetic():
    from _export_util import Running, find, one

    dspark, syn = REL / "sglang-0.5.23-dspark.log", REL / "llamacpp-0.3.36-synthetic.log"
    (e,) = EXPECTED[dspark.name]["segments"]
    async with Running([str(dspark), str(syn)]) as run:
        await run.wait_records([e["records"], 8])
        got = await run.scrape()
    lab = {"source": dspark.name, "rank": "all", "segment": "0"}
    for q in ("cap_len", "block_accept_len"):
        assert one(got, f"specwatch_{q}_mean", **lab) == pytest.approx(e[f"{q}_mean"], abs=1e-9)
        assert one(got, f"specwatch_{q}_values", **lab) == e["records"]
    assert one(got, "specwatch_segment_synthetic", source=syn.name, rank="all", segment="0") == 1
    marked = find(got, "specwatch_segment_synthetic")
    assert [(lab["source"], lab["segment"]) for lab, _ in marked] == [(syn.name, "0")]  # the real run: none
