"""The sample-log generator (tools/gen_sample_logs.py): determinism and the invariants of its output.

These tests use only the generator and small regexes defined here, not specwatch's parser, so
they check the data itself. If a parser test fails on these files, this tells you whether the
files or the parser are at fault.
"""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.resolve().parent.parent
GEN = ROOT / "tools" / "gen_sample_logs.py"
SAMPLES = ROOT / "sample_logs"
NAMES = ["sglang_eagle3_restart.log", "ab_a.log", "ab_b.log", "sglang_dp_attention.log", "vllm_v1_eagle3.log"]
SGLANG = ["sglang_eagle3_restart.log", "ab_a.log", "ab_b.log", "sglang_dp_attention.log"]

SGL_TS = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)((?: [A-Z]+\d+)*)\] ")
DECODE = re.compile(r"\] Decode batch, #running-req: (\d+), .*accept len: ([\d.]+), accept rate: ([\d.]+),")
ARGS = re.compile(
    r"server_args=ServerArgs\(.*speculative_num_steps=(\d+), speculative_eagle_topk=(\d+), "
    r"speculative_num_draft_tokens=(\d+),"
)
VLLM_TS = re.compile(r"^\(APIServer pid=\d+\) INFO (\d\d-\d\d \d\d:\d\d:\d\d) ")
VLLM_SPEC = re.compile(
    r"SpecDecoding metrics: Mean acceptance length: ([\d.]+), Accepted throughput: ([\d.]+) tokens/s, "
    r"Drafted throughput: ([\d.]+) tokens/s, Accepted: (\d+) tokens, Drafted: (\d+) tokens, "
    r"Per-position acceptance rate: ([\d., ]+), Avg Draft acceptance rate: ([\d.]+)%$"
)


def generate(out_dir: Path, *extra: str) -> None:
    subprocess.run(
        [sys.executable, str(GEN), "--out-dir", str(out_dir), *extra],
        check=True,
        capture_output=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("samples")
    generate(out)
    return out


def sglang_runs(path: Path):
    """Split an SGLang log at each server_args line: [(steps, topk, ndt, [(ts, tag, running, al, rate)])]."""
    runs = []
    for line in path.read_text().splitlines():
        if (m := ARGS.search(line)) is not None:
            runs.append((*map(int, m.groups()), []))
            continue
        if (d := DECODE.search(line)) is not None:
            ts = SGL_TS.match(line)
            assert ts is not None and runs, line
            runs[-1][3].append(
                (ts.group(1), ts.group(2).strip(), int(d.group(1)), float(d.group(2)), float(d.group(3)))
            )
    return runs


def mean(xs) -> float:
    return sum(xs) / len(xs)


# ------------------------------------------------------------------------------ determinism
def test_generator_is_deterministic(generated, tmp_path):
    generate(tmp_path)
    for name in NAMES:
        assert (tmp_path / name).read_bytes() == (generated / name).read_bytes(), name


def test_committed_samples_match_the_generator(generated):
    for name in NAMES:
        committed = SAMPLES / name
        assert committed.exists(), f"{committed} missing: run python tools/gen_sample_logs.py"
        assert committed.read_bytes() == (generated / name).read_bytes(), (
            f"{name} differs from the generator's output: regenerate with python tools/gen_sample_logs.py"
        )


def test_other_seed_changes_the_data(generated, tmp_path):
    generate(tmp_path, "--seed", "7")
    assert (tmp_path / "ab_a.log").read_bytes() != (generated / "ab_a.log").read_bytes()


def test_sizes_are_reasonable(generated):
    total = sum((generated / n).stat().st_size for n in NAMES)
    assert total < 3_200_000
    for name in SGLANG:
        n = sum(len(run[3]) for run in sglang_runs(generated / name))
        assert 300 <= n <= 2000, (name, n)


# ------------------------------------------------------------------------------ SGLang invariants
@pytest.mark.parametrize("name", SGLANG)
def test_sglang_rate_follows_from_accept_len(generated, name):
    runs = sglang_runs(generated / name)
    assert runs
    for steps, _topk, ndt, recs in runs:
        assert recs
        for ts, _tag, running, al, rate in recs:
            assert 1.0 <= al <= steps + 1, (ts, al)
            # PR #23530: rate = (AL - 1) / (ndt - 1), re-derivable from the printed AL within 0.01
            assert abs(rate - round((al - 1) / (ndt - 1), 2)) <= 0.01 + 1e-9, (ts, al, rate)
            assert running >= 1


@pytest.mark.parametrize("name", SGLANG)
def test_sglang_timestamps_non_decreasing(generated, name):
    last = None
    for line in (generated / name).read_text().splitlines():
        if "server_args=" in line:
            last = None  # a new server run
        m = SGL_TS.match(line)
        if m is None:
            continue  # tqdm bars, ^C
        if last is not None:
            assert m.group(1) >= last, line
        last = m.group(1)


def test_restart_segments(generated):
    runs = sglang_runs(generated / "sglang_eagle3_restart.log")
    assert [(r[0], r[1], r[2]) for r in runs] == [(3, 1, 4), (5, 1, 6)]
    broken, fixed = (mean([x[3] for x in r[3]]) for r in runs)
    assert abs(broken - 1.5) <= 0.1, broken
    assert abs(fixed - 2.4) <= 0.1, fixed
    gap = datetime.fromisoformat(runs[1][3][0][0]) - datetime.fromisoformat(runs[0][3][-1][0])
    assert 60 <= gap.total_seconds() <= 300
    text = (generated / "sglang_eagle3_restart.log").read_text()
    assert text.count("The server is fired up and ready to roll!") == 2
    assert "speculative_draft_model_path='/models/eagle3-llama3.1-8b-fixed'" in text


def test_sglang_has_idle_gaps_and_bursts(generated):
    ((_, _, _, recs),) = sglang_runs(generated / "ab_a.log")
    times = [datetime.fromisoformat(r[0]) for r in recs]
    gaps = [(b - a).total_seconds() for a, b in zip(times, times[1:])]
    assert sum(g >= 15 for g in gaps) >= 3  # idle periods with no lines at all
    per_second: dict = {}
    for t in times:
        per_second[t] = per_second.get(t, 0) + 1
    assert max(per_second.values()) >= 2  # several lines per second under load


def test_sglang_values_are_autocorrelated(generated):
    ((_, _, _, recs),) = sglang_runs(generated / "ab_b.log")
    xs = [r[3] for r in recs]
    m = mean(xs)
    lag1 = sum((a - m) * (b - m) for a, b in zip(xs, xs[1:])) / sum((a - m) ** 2 for a in xs)
    assert lag1 > 0.1, lag1


def test_ab_pair(generated):
    ((sa, _, nda, a),) = sglang_runs(generated / "ab_a.log")
    ((sb, _, ndb, b),) = sglang_runs(generated / "ab_b.log")
    assert (sa, nda, sb, ndb) == (3, 4, 5, 6)
    assert abs(mean([r[3] for r in a]) - 2.30) <= 0.1
    assert abs(mean([r[3] for r in b]) - 2.55) <= 0.1
    assert 1200 <= len(a) <= 1800 and 1200 <= len(b) <= 1800
    first = lambda name: (generated / name).read_text().split("\n", 1)[0][:21]  # noqa: E731
    assert first("ab_a.log") == first("ab_b.log") == "[2026-11-20 12:00:01]"


def test_dp_attention_ranks(generated):
    text = (generated / "sglang_dp_attention.log").read_text()
    assert "dp_size=4" in text and "tp_size=4" in text and "enable_dp_attention=True" in text
    ((_, _, _, recs),) = sglang_runs(generated / "sglang_dp_attention.log")
    by_rank: dict = {}
    for r in recs:
        by_rank.setdefault(r[1], []).append(r[3])
    assert sorted(by_rank) == ["DP0 TP0", "DP1 TP1", "DP2 TP2", "DP3 TP3"]
    for tag, want in zip(sorted(by_rank), (2.60, 2.70, 2.50, 2.65)):
        assert abs(mean(by_rank[tag]) - want) <= 0.1, tag
    # ranks are not always printed in the same order within a tick
    orders = set()
    tick: list = []
    for r in recs:
        if r[1] in tick:
            orders.add(tuple(tick))
            tick = []
        tick.append(r[1])
    assert len(orders) > 5


# ------------------------------------------------------------------------------ vLLM invariants
def test_vllm_lines_are_consistent(generated):
    lines = (generated / "vllm_v1_eagle3.log").read_text().splitlines()
    assert "vLLM API server version 0.11.2" in "\n".join(lines[:5])
    pairs, last = 0, None
    for i, line in enumerate(lines):
        if (ts := VLLM_TS.match(line)) is not None:
            if last is not None:
                assert ts.group(1) >= last, line
            last = ts.group(1)
        m = VLLM_SPEC.search(line)
        if m is None:
            continue
        pairs += 1
        prev = lines[i - 1]
        assert "Engine 000: Avg prompt throughput" in prev  # the Engine line just before
        assert VLLM_TS.match(prev).group(1) == ts.group(1)  # same timestamp
        mal, acc_thr, dr_thr = float(m.group(1)), float(m.group(2)), float(m.group(3))
        accepted, drafted = int(m.group(4)), int(m.group(5))
        per_pos = [float(x) for x in m.group(6).split(", ")]
        avg = float(m.group(7))
        k = len(per_pos)
        assert k == 3 and drafted % k == 0 and drafted > 0
        num_drafts = drafted // k
        assert abs(mal - (1 + accepted / num_drafts)) <= 0.005 + 1e-9, line
        assert abs(avg - 100 * accepted / drafted) <= 0.05 + 1e-9, line
        assert per_pos == sorted(per_pos, reverse=True)
        assert abs(sum(per_pos) - accepted / num_drafts) <= 0.0005 * k + 1e-9
        assert abs(acc_thr - accepted / 10) <= 0.005 + 1e-9 and abs(dr_thr - drafted / 10) <= 0.005 + 1e-9
    assert 250 <= pairs <= 400


def test_vllm_idle_periods_have_no_lines(generated):
    stamps = [
        datetime.strptime("2026-" + m.group(1), "%Y-%m-%d %H:%M:%S")
        for line in (generated / "vllm_v1_eagle3.log").read_text().splitlines()
        if "SpecDecoding" in line and (m := VLLM_TS.match(line))
    ]
    steps = [(b - a).total_seconds() for a, b in zip(stamps, stamps[1:])]
    assert all(s % 10 == 0 and s >= 10 for s in steps)
    assert sum(s >= 30 for s in steps) >= 5  # idle gaps, no zero lines


# ------------------------------------------------------------------------------ large mode
def test_large_mode(tmp_path):
    out = tmp_path / "large.log"
    subprocess.run(
        [sys.executable, str(GEN), "--large", "20000", "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    lines = out.read_text().splitlines()
    assert "server_args=ServerArgs(" in lines[0] and "tp_size=2" in lines[0]
    body = lines[1:]
    assert len(body) == 20000
    assert sum("server_args" in x for x in body) == 0
    dec = [x for x in body if "] Decode batch, " in x]
    assert 0.75 <= len(dec) / len(body) <= 0.85
    assert 0.07 <= sum("] Prefill batch, " in x for x in body) / len(body) <= 0.13
    assert 0.07 <= sum('"POST /v1/chat/completions' in x for x in body) / len(body) <= 0.13
    assert all(x.startswith("[2026-") for x in body)
    assert all(" TP0] " in x for x in dec)
    stamps = [x[1:20] for x in body]
    assert stamps == sorted(stamps)
    for x in dec:
        al, rate = map(float, DECODE.search(x).group(2, 3))
        assert 1 <= al <= 4
        assert abs(rate - round(al / 4, 2)) <= 0.01 + 1e-9  # Feb 2026 build: AL / ndt
    again = tmp_path / "again.log"
    subprocess.run(
        [sys.executable, str(GEN), "--large", "20000", "--out", str(again)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert again.read_bytes() == out.read_bytes()
