"""`specwatch summary --json` on every shared real log (copied unchanged into tests/fixtures/).

Expected values were worked out by hand from the raw lines (the arithmetic is in the comments),
not by running the parser.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_util import run_cli

FIXTURES = Path(__file__).parent.parent / "fixtures" / "real_logs"
SHARED = Path(__file__).parent.resolve().parents[2] / "shared" / "reference" / "real_logs"

# file -> (lines, records, malformed, accept_len n, accept_len mean, accept_rate n, accept_rate mean)
EXPECTED = {
    # Prefill lines only (2026 hybrid SWA form): no Decode batch record.
    "sglang_issue_eugr-llama-benchy_15.log": (5, 0, 0, 0, None, 0, None),
    # A wrapped dict-style args dump: a startup marker, no record.
    "sglang_issue_noonghunna-club-3090_1261.log": (5, 0, 0, 0, None, 0, None),
    # 2025-01 `Prefill batch.` lines with `cache hit rate` and an access line.
    "sglang_issue_sgl-project-sglang_2777.log": (10, 0, 0, 0, None, 0, None),
    # Prefill with `mamba usage` / `#pending-token` and access lines.
    "sglang_issue_sgl-project-sglang_29516.log": (10, 0, 0, 0, None, 0, None),
    # 2026 CUDA graph capture lines with no prefix.
    "sglang_issue_sgl-project-sglang_33483.log": (3, 0, 0, 0, None, 0, None),
    # Prose before the prefix ("sever logs: [2025-...") on access lines.
    "sglang_issue_sgl-project-sglang_4407.log": (6, 0, 0, 0, None, 0, None),
    # One 2025-03 `Decode batch.` line: accept len 2.54, no accept rate, `largest-len: 0`, trailing ", ".
    "sglang_issue_sgl-project-sglang_4759.log": (10, 1, 0, 1, 2.54, 0, None),
    # 7 DP-attention decode lines (DP24..DP30), PD `pre-allocated usage`, no spec fields.
    "sglang_issue_sgl-project-sglang_6017.log": (8, 7, 0, 0, None, 0, None),
    # 3 lines: AL 3.05, 2.63, 2.83 -> 8.51/3; rate 0.68, 0.54, 0.61 -> 1.83/3.
    "sglang_pr_sgl-project-sgl-kernel-npu_608.log": (11, 3, 0, 3, 8.51 / 3, 3, 1.83 / 3),
    # A `Finish: obj=... 'spec_accept_rate'` per-request line: a look-alike, not a record.
    "sglang_pr_sgl-project-sglang_11144.log": (2, 0, 0, 0, None, 0, None),
    # tqdm bars, rank setup lines, a Python warning.
    "sglang_pr_sgl-project-sglang_12978.log": (8, 0, 0, 0, None, 0, None),
    # [DEBUG] lines around 2026 prefill lines.
    "sglang_pr_sgl-project-sglang_18570.log": (11, 0, 0, 0, None, 0, None),
    # One non-spec 2026 decode line (no accept len) among prefill/access lines.
    "sglang_pr_sgl-project-sglang_22166.log": (11, 1, 0, 0, None, 0, None),
    # A bench_one_batch start-up: rank setup lines and tqdm.
    "sglang_pr_sgl-project-sglang_4058.log": (16, 0, 0, 0, None, 0, None),
    # MAL 2.81, 3.11 -> 2.96; 60.3% and 70.3% -> 0.603, 0.703 -> 0.653.
    "vllm_issue_noonghunna-club-3090_137.log": (7, 2, 0, 2, 2.96, 2, 0.653),
    # tqdm CUDA-graph capture bars concatenated on one line; worker lines.
    "vllm_issue_noonghunna-club-3090_178.log": (6, 0, 0, 0, None, 0, None),
    # MAL 4.00 twice; 100.0% twice.
    "vllm_issue_noonghunna-club-3090_34.log": (6, 2, 0, 2, 4.0, 2, 1.0),
    # A markdown header "=== Last 3 SpecDecoding metrics ===" (no colon: not a record), 3 lines, ``` fence.
    "vllm_issue_noonghunna-club-3090_585.log": (8, 3, 0, 3, 4.0, 3, 1.0),
    # MAL 4.00 twice; 99.9% and 99.8% -> 0.9985.
    "vllm_issue_noonghunna-club-3090_986.log": (7, 2, 0, 2, 4.0, 2, 0.9985),
    # A V0 engine start-up line (speculative_config=None): a marker.
    "vllm_issue_rust-lang-www.rust-lang.org_2107.log": (4, 0, 0, 0, None, 0, None),
    # Two engines (002, 004): MAL 2.87, 2.98 -> 2.925; 62.3%, 66.0% -> 0.6415.
    "vllm_issue_vllm-project-vllm-ascend_12521.log": (5, 2, 0, 2, 2.925, 2, 0.6415),
    # The launch command, version line and non-default args: markers only.
    "vllm_issue_vllm-project-vllm_19775.log": (12, 0, 0, 0, None, 0, None),
    # V0 start-up (Medusa): no metric line.
    "vllm_issue_vllm-project-vllm_6768.log": (11, 0, 0, 0, None, 0, None),
    # V0 cumulative lines: no accept len printed; rates 0.200 and 0.067 -> 0.1335.
    "vllm_issue_vllm-project-vllm_7301.log": (3, 2, 0, 0, None, 2, 0.1335),
    # V0 stats lines (throughput) only.
    "vllm_issue_vllm-project-vllm_7540.log": (7, 0, 0, 0, None, 0, None),
    # First V1 form (fraction 1.000) and second form (100.0%): no MAL printed.
    "vllm_pr_vllm-project-vllm_15902.log": (4, 2, 0, 0, None, 2, 1.0),
    # A pasted Prometheus query table: not log lines.
    "vllm_prom_vllm-project-vllm_24049.txt": (18, 0, 0, 0, None, 0, None),
}


def summary_json(*args: str) -> dict:
    """``summary --json --allow-empty``: many shared files are startup lines alone (no metric line:
    exit 2 without the flag); nothing else on stderr than that warning."""
    out = run_cli("summary", "--json", "--allow-empty", *args, timeout=60)
    assert out.returncode == 0, out.stderr
    assert all("no speculative-decoding metric found" in w for w in out.stderr.splitlines()), out.stderr
    return json.loads(out.stdout)


def test_every_shared_file_is_covered_and_unchanged():
    names = sorted(p.name for p in FIXTURES.iterdir())
    assert names == sorted(EXPECTED)
    if SHARED.is_dir():
        for p in SHARED.iterdir():
            assert (FIXTURES / p.name).read_bytes() == p.read_bytes(), p.name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_summary_counts_and_means(name):
    lines, records, malformed, al_n, al_mean, ar_n, ar_mean = EXPECTED[name]
    src = summary_json(str(FIXTURES / name))["sources"][0]
    assert (src["lines"], src["records"], src["malformed"]) == (lines, records, malformed)
    assert src["accept_len"]["n"] == al_n
    assert src["accept_rate"]["n"] == ar_n
    if al_mean is None:
        assert src["accept_len"]["mean"] is None
    else:
        assert src["accept_len"]["mean"] == pytest.approx(al_mean, abs=1e-9)
    if ar_mean is None:
        assert src["accept_rate"]["mean"] is None
    else:
        assert src["accept_rate"]["mean"] == pytest.approx(ar_mean, abs=1e-9)
    seg_records = sum(s["records"] for s in src["segments"])
    assert seg_records == records


def test_npu_rate_definition_and_weights():
    src = summary_json(str(FIXTURES / "sglang_pr_sgl-project-sgl-kernel-npu_608.log"))["sources"][0]
    seg = src["segments"][0]
    # (3.05-1)/0.68 = 3.01, (2.63-1)/0.54 = 3.02, (2.83-1)/0.61 = 3.00: the 2026 drafts-only formula, D = 3.
    assert seg["rate_definition"]["printed_definition"] == "accepted_drafts_over_proposed_drafts"
    assert seg["rate_definition"]["drafts_per_step"] == 3
    assert seg["accept_rate_normalized"]["mean"] == pytest.approx((8.51 / 3 - 1) / 3)
    # Weighted by #running-req 24, 23, 22: (3.05*24 + 2.63*23 + 2.83*22) / 69.
    assert seg["accept_len"]["weighted_mean"] == pytest.approx(195.95 / 69)
    assert seg["accept_len"]["min"] == 2.63 and seg["accept_len"]["max"] == 3.05
    assert seg["accept_len"]["last"] == 2.83
    assert seg["ranks"] is None  # one rank tag only: "TP0 EP0" (the key is always there)


def test_dp_ranks_and_throughput():
    src = summary_json(str(FIXTURES / "sglang_issue_sgl-project-sglang_6017.log"))["sources"][0]
    seg = src["segments"][0]
    assert sorted(seg["ranks"]) == [f"DP{i} TP{i}" for i in range(24, 31)]
    # 385.00 + 384.94 + 384.89 + 384.89 + 384.95 + 384.91 + 384.85 = 2694.43
    assert src["throughput"]["mean"] == pytest.approx(2694.43 / 7)
    assert src["running_req"]["mean"] == 43


def test_vllm_engines_tokens_and_positions():
    src = summary_json(str(FIXTURES / "vllm_issue_noonghunna-club-3090_137.log"))["sources"][0]
    seg = src["segments"][0]
    # Accepted 472 + 548, drafted 783 + 780.
    assert seg["tokens"] == {"accepted": 1020, "drafted": 1563, "pooled_rate": pytest.approx(1020 / 1563)}
    # num_drafts = drafted / k = 261 and 260; MAL weighted by them.
    assert seg["accept_len"]["weighted_mean"] == pytest.approx((2.81 * 261 + 3.11 * 260) / 521)
    # Per-position pooled by num_drafts: (0.839*261 + 0.862*260)/521 ...
    assert seg["per_position"] == pytest.approx(
        [
            (0.839 * 261 + 0.862 * 260) / 521,
            (0.605 * 261 + 0.692 * 260) / 521,
            (0.364 * 261 + 0.554 * 260) / 521,
        ]
    )
    ascend = summary_json(str(FIXTURES / "vllm_issue_vllm-project-vllm-ascend_12521.log"))["sources"][0]
    ranks = ascend["segments"][0]["ranks"]
    assert ranks["engine 2"]["accept_len"]["mean"] == 2.87
    assert ranks["engine 4"]["accept_len"]["mean"] == 2.98


def test_vllm_v0_cumulative_counters_are_differenced():
    src = summary_json(str(FIXTURES / "vllm_issue_vllm-project-vllm_7301.log"))["sources"][0]
    # Line 1: accepted 1, draft 5, emitted 1, k 5 -> AL = 1 / (5/5) = 1.0, rate 1/5.
    # Line 2: +0 accepted, +10 draft, +2 emitted -> AL = 2 / (10/5) = 1.0, rate 0/10.
    assert src["accept_len_derived"]["n"] == 2
    assert src["accept_len_derived"]["mean"] == 1.0
    assert src["accept_rate_derived"]["mean"] == pytest.approx(0.1)
    seg = src["segments"][0]
    assert seg["rate_definition"]["printed_definition"] == "vllm_v0_cumulative_accepted_over_drafted"


def test_startup_markers_carry_config():
    src = summary_json(str(FIXTURES / "vllm_issue_vllm-project-vllm_19775.log"))["sources"][0]
    assert len(src["segments"]) == 1  # version line + non-default args: one start-up
    cfg = src["segments"][0]["config"]
    assert cfg["version"] == "0.9.2.dev121+g4c8f64faa"
    assert cfg["model_path"] == "meta-llama/Llama-3.3-70B-Instruct"
    assert cfg["draft_model_path"] == "meta-llama/Llama-3.2-1B"
    assert cfg["num_speculative_tokens"] == 5
    assert cfg["tp_size"] == 4
    v0 = summary_json(str(FIXTURES / "vllm_issue_rust-lang-www.rust-lang.org_2107.log"))["sources"][0]
    assert v0["segments"][0]["reason"] == "engine_init"
    assert (
        v0["segments"][0]["config"]["version"] == "0.6.6"
    )  # "(v0.6.6)" on the line: the release, as the version lines say it
    dump = summary_json(str(FIXTURES / "sglang_issue_noonghunna-club-3090_1261.log"))["sources"][0]
    assert [s["reason"] for s in dump["segments"]] == ["args_dict"]
    assert dump["segments"][0]["config"]["family"] == "sglang"


def test_all_real_logs_at_once_never_crash():
    files = [str(p) for p in sorted(FIXTURES.iterdir())]
    out = summary_json(*files)
    assert len(out["sources"]) == len(files)
    assert out["comparison"] is None  # only with exactly two sources
