"""The formats the field moved to (issue 12 item 4): each gives its printed acceptance length
through ``summary --json``. Fixtures (tests/fixtures/formats, first line a ``# source:`` comment
that no server prints, dropped here) and held-out lines written by hand from the upstream format
strings; every path (line parser, both scanners) agrees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_util import run_cli
from _scan_util import fast_result, make_log, same, slow_result

from tui.core.formats.fastscan import scan_chunk

FIX = Path(__file__).parent.parent / "fixtures" / "formats"


def summary(tmp_path: Path, text: str, name: str = "log.txt") -> dict:
    p = tmp_path / name
    p.write_text(text)
    out = run_cli("summary", "--json", str(p))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["sources"][0]


def fixture(name: str) -> str:
    text = (FIX / name).read_text()
    assert text.startswith("# source:")
    return text.split("\n", 1)[1]


def test_llamacpp_mean_len_fixture(tmp_path):
    s = summary(tmp_path, fixture("llamacpp_print_timing_meanlen.log"))
    # 2 per-request lines, 2 statistics lines (verify steps only: the tokens are the requests')
    assert (s["records"], s["malformed"]) == (4, 0)
    assert s["accept_len"]["pooled"]["value"] == pytest.approx(1 + 325 / 201)  # cumulative: 2.62
    assert s["accept_rate"]["pooled"]["value"] == pytest.approx(325 / 570)
    assert s["tokens"] == {"accepted": 325, "drafted": 570, "pooled_rate": 325 / 570}  # counted once
    r = s["requests"]
    assert r["n"] == 2
    assert (r["accept_len"]["mean"], r["accept_len"]["p10"], r["accept_len"]["p90"]) == pytest.approx(
        (2.55, 2.286, 2.814)
    )
    assert s["accept_len"]["mean"] == pytest.approx(2.55)  # the statistics lines add nothing


def test_llamacpp_older_forms_take_the_length_from_statistics(tmp_path):
    s = summary(tmp_path, fixture("llamacpp_print_timing_legacy_rate.log"))
    # 3 per-request lines, 2 statistics differences (verify steps: the tokens are the requests')
    assert (s["records"], s["malformed"]) == (5, 0)
    assert s["accept_rate"]["mean"] == pytest.approx((0.69953 + 0.49306 + 0.28302) / 3)
    # the pooled length from the statistics' cumulative counters (the 2025 block prints none)
    assert s["accept_len"]["pooled"]["value"] == pytest.approx(1 + 220 / 119)
    r = s["requests"]
    # 1 + 149/71 and 1 + 71/48 from the statistics differences; the 2025 block has none
    assert r["n"] == 2 and r["accept_len"]["mean"] == pytest.approx((1 + 149 / 71 + 1 + 71 / 48) / 2)
    s = summary(tmp_path, fixture("llamacpp_print_timing_acceptance.log"))
    assert s["requests"]["n"] == 2
    assert s["requests"]["accept_len"]["mean"] == pytest.approx((1 + 39 / 17 + 2.92) / 2)


def test_llamacpp_statistics_only_differenced(tmp_path):
    s = summary(tmp_path, fixture("llamacpp_statistics.log"))
    assert s["requests"] is None
    assert s["records"] == 3  # ngram-mod b=1, draft-mtp b=1, draft-mtp b=2; unchanged lines give none
    d = s["accept_len_derived"]
    assert d["n"] == 3
    assert d["mean"] == pytest.approx((11.25 + (1 + 603 / 297) + (1 + 792 / 401)) / 3)
    assert s["accept_len"]["pooled"]["value"] == pytest.approx(1 + (41 + 603 + 792) / (4 + 297 + 401))


def test_ollama_fixtures(tmp_path):
    s = summary(tmp_path, fixture("ollama_timing.log"))
    assert s["requests"]["n"] == 1 and s["requests"]["accept_len"]["mean"] == 2.69
    # the statistics line repeats the same request: its tokens are not counted twice, its verify
    # steps give the pooled length
    assert s["records"] == 2 and s["tokens"]["accepted"] == 161
    assert s["accept_len"]["pooled"]["value"] == pytest.approx(1 + 161 / 95)
    s = summary(tmp_path, fixture("ollama_mlx_spec_stats.log"))
    assert s["requests"]["n"] == 1  # drafted=0 skipped
    assert s["requests"]["accept_len"]["mean"] == pytest.approx(1 + 281 / 140)


def test_vllm_bench_fixture(tmp_path):
    s = summary(tmp_path, fixture("vllm_bench_serve.txt"))
    assert (s["records"], s["malformed"]) == (1, 0)
    assert s["accept_len"]["mean"] == 3.07
    assert s["accept_rate"]["mean"] == pytest.approx(0.6892)
    assert s["accept_len"]["pooled"]["value"] == pytest.approx(1 + 24810 / 12000)


# Held out: written from the format strings, not copied from the fixtures.
HELD_OUT = {
    # SLT_INF "draft acceptance = %0.5f (%5d accepted / %5d generated), mean len = %5.2f"
    "llamacpp": (
        "2.01.100.200 I slot print_timing: id  3 | task 412 | draft acceptance = 0.58000 (   58 accepted /   100 generated), mean len =  3.14\n"
        "2.01.100.230 I statistics      draft-eagle3: #calls(b,g,a) =    4    120     37, #gen drafts =     37, "
        "#acc drafts =    30, #gen tokens =    100, #acc tokens =    58, #mean acc len = 2.57, "
        "#acc rate/pos = (0.811, 0.541, 0.216), dur(b,g,a) = 0.010, 99.000, 0.100 ms\n",
        3.14,
    ),
    # the same line passed through by Ollama (--no-log-prefix --no-log-timestamps)
    "ollama": (
        "slot print_timing: id  1 | task 7 | draft acceptance = 0.25000 (   10 accepted /    40 generated), mean len =  1.50\n",
        1.5,
    ),
    # slog TextHandler: msg="speculative decode stats" iterations=%d drafted=%d accepted=%d ...
    "ollama_mlx": (
        'time=2026-09-01T08:00:00.000Z level=INFO source=speculate_stats.go:62 msg="speculative decode stats" '
        'iterations=50 drafted=120 accepted=75 acceptance=0.63 avg_draft=2.40 max_draft=4 avg_accepted=1.50 depth_over_time="2.4/4"\n',
        2.5,
    ),
    # "{:<40} {:<10.2f}".format("Acceptance length:", ...), title "{s:{c}^{n}}" with n=50, c="-"
    "vllm_bench": (
        "-" * 15
        + "Speculative Decoding"
        + "-" * 15
        + "\n"
        + "{:<40} {:<10.2f}\n".format("Acceptance rate (%):", 50.0)
        + "{:<40} {:<10.2f}\n".format("Acceptance length:", 2.5)
        + "{:<40} {:<10}\n".format("Drafts:", 100)
        + "{:<40} {:<10}\n".format("Draft tokens:", 300)
        + "{:<40} {:<10}\n".format("Accepted tokens:", 150)
        + "=" * 50
        + "\n",
        2.5,
    ),
}


@pytest.mark.parametrize("name", sorted(HELD_OUT))
def test_held_out_lines(tmp_path, name):
    text, al = HELD_OUT[name]
    s = summary(tmp_path, "an unrelated line\n" + text + "another one\n")
    got = s["requests"]["accept_len"]["mean"] if s["requests"] else s["accept_len"]["mean"]
    assert got == pytest.approx(al)


NEW_LINES = (
    [fixture(n) for n in sorted(p.name for p in FIX.glob("*.log"))]
    + [fixture("vllm_bench_serve.txt")]
    + [t for t, _ in HELD_OUT.values()]
)


@pytest.mark.parametrize("i", range(len(NEW_LINES)))
def test_scanners_hand_new_lines_to_the_line_parser(i, scanner):
    base = make_log(21, 3000)
    half = base.rfind(b"\n", 0, len(base) // 2) + 1
    data = base[:half] + NEW_LINES[i].encode() + base[half:]
    assert scan_chunk(data) is None
    fast, _ = fast_result(data, chunk=1 << 14)
    same(fast, slow_result(data))
    alone = slow_result(base)
    # the new lines were read, not skipped: requests, or more records / drafted-token sums
    read = (fast["requests"], fast["records"], fast["accept_rate"]) != (
        alone["requests"],
        alone["records"],
        alone["accept_rate"],
    )
    assert read and fast["malformed"] == alone["malformed"]


@pytest.mark.parametrize("chunk", [1 << 12, 5000, 1 << 13])
def test_bench_block_across_chunk_boundaries(chunk, scanner):
    base = make_log(22, 400)
    block = fixture("vllm_bench_serve.txt").encode()
    n_base = slow_result(base)["records"]
    for cut in range(chunk - 700, chunk + 700, 233):  # the block straddles the first boundary
        at = base.rfind(b"\n", 0, cut) + 1
        data = base[:at] + block + base[at:]
        fast, _ = fast_result(data, chunk=chunk)
        same(fast, slow_result(data))
        assert fast["records"] == n_base + 1
