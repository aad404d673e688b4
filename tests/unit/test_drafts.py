"""Drafts where the draft length varies (stats/drafts.py, docs/formats.md "Drafts when the draft
length varies"): vLLM 0.33's dynamic speculation and any proposer that drafts fewer than k tokens.
The lines follow 0.33's format string (vllm/v1/spec_decode/metrics.py:120), their counts kept as
its SpecDecodingStats.observe_draft keeps them; the truth is worked out from those counts."""

from __future__ import annotations

import random

import pytest

from tui.core.formats import LineParser
from tui.core.stats import SourceStats

LINE = (
    "(APIServer pid=1) INFO 05-01 10:00:{s:02d} [metrics.py:120] SpecDecoding metrics: Mean acceptance "
    "length: {mal:.2f}, Accepted throughput: {at:.2f} tokens/s, Drafted throughput: {dt:.2f} tokens/s, "
    "Accepted: {a} tokens, Drafted: {d} tokens, Per-position acceptance rate: {pp}, Avg Draft "
    "acceptance rate: {r:.1f}%"
)


def lines_of(seed: int, n: int, k: int, lengths: tuple[int, ...], p: float) -> tuple[list[str], float]:
    """``n`` interval lines whose drafts each have one of ``lengths`` tokens (<= k), and the true
    pooled accept length 1 + Σaccepted / Σdrafts."""
    rng = random.Random(seed)
    out, acc_t, drafts_t = [], 0, 0
    for i in range(n):
        drafts = accepted = drafted = 0
        per_pos = [0] * k
        for _ in range(rng.randint(20, 200)):
            kb = rng.choice(lengths)
            for _ in range(rng.randint(1, 6)):
                j = 0
                while j < kb and rng.random() < p:
                    j += 1
                drafts, drafted, accepted = drafts + 1, drafted + kb, accepted + j
                for q in range(j):
                    per_pos[q] += 1
        pp = ", ".join(f"{x / drafts:.3f}" for x in per_pos)
        out.append(
            LINE.format(
                s=i % 60,
                mal=1 + accepted / drafts,
                at=accepted / 10,
                dt=drafted / 10,
                a=accepted,
                d=drafted,
                pp=pp,
                r=100 * accepted / drafted,
            )
        )
        acc_t, drafts_t = acc_t + accepted, drafts_t + drafts
    return out, 1 + acc_t / drafts_t


def pooled(lines: list[str]) -> dict:
    parser = LineParser("t", year=2026, ref_time=None)
    stats = SourceStats("t")
    stats.feed(x for i, line in enumerate(lines) if (x := parser.feed(line, i + 1, 0)) is not None)
    (seg,) = stats.to_dict()["segments"]
    return seg["accept_len"]["pooled"]


@pytest.mark.parametrize("seed", range(12))
def test_dynamic_draft_lengths_pooled_from_the_printed_means(seed):
    rng = random.Random(100 + seed)
    k = rng.choice((3, 4, 5, 7))
    lengths = tuple(sorted(rng.sample(range(1, k + 1), rng.randint(2, k))))
    if lengths[-1] == k and len(lengths) == 1:
        lengths = (1, k)
    p = rng.uniform(0.3, 0.85)
    lines, truth = lines_of(seed, 60, k, lengths, p)
    got = pooled(lines)
    assert "draft length varies" in got["method"]
    # the means are printed to 0.01: the estimate lacks only their rounding, which averages out
    assert got["value"] == pytest.approx(truth, abs=0.004), (k, lengths, p)
    lo, hi = got["ci95"]
    assert lo - 0.004 <= truth <= hi + 0.004


@pytest.mark.parametrize("seed", range(6))
def test_a_fixed_k_keeps_drafted_over_k_exactly(seed):
    rng = random.Random(seed)
    k = rng.choice((1, 2, 3, 5, 8))
    lines, truth = lines_of(seed, 40, k, (k,), rng.uniform(0.05, 0.95))
    got = pooled(lines)
    assert got.get("method") is None
    assert got["value"] == pytest.approx(truth, rel=1e-12)  # drafted / k is the drafts


def test_a_line_whose_mean_cannot_tell_its_drafts_is_left_out_and_said():
    lines, _ = lines_of(7, 30, 5, (1, 2, 5), 0.6)
    # a line that accepted a little over many drafts: its mean prints as 1.00
    lines.append(
        LINE.format(
            s=59, mal=1.001, at=0.4, dt=900.0, a=4, d=9000, pp="0.001, 0.000, 0.000, 0.000, 0.000", r=0.04
        )
    )
    got = pooled(lines)
    assert "1 lines whose mean cannot tell their drafts are left out" in got["method"]
    assert got["n"] == 30


def _pooled_in_runs(lines: list[str], size: int) -> dict:
    """The pooled length when the parsed lines go into the statistics ``size`` at a time (1: as
    a live source feeds them; len(lines): as one run)."""
    parser = LineParser("t", year=2026, ref_time=None)
    stats = SourceStats("t")
    items = [x for i, line in enumerate(lines) if (x := parser.feed(line, i + 1, 0)) is not None]
    for start in range(0, len(items), size):
        stats.feed(items[start : start + size])
    (seg,) = stats.to_dict()["segments"]
    return seg["accept_len"]["pooled"]


@pytest.mark.parametrize("size", [1, 3, 7, 1000])
def test_the_drafts_do_not_depend_on_how_the_lines_were_cut_into_runs(size):
    """A segment with no version line starts under an era not settled yet (its first lines could
    be on another era's scale): a run that holds on no era's scale breaks drafted / k there as
    anywhere, so a live source's first lines get their drafts from their means too."""
    lines, truth = lines_of(11, 40, 5, (1, 2, 5), 0.6)
    got = _pooled_in_runs(lines, size)
    whole = _pooled_in_runs(lines, len(lines))
    assert got["method"] == whole["method"] and got["method"].endswith("(printed mean - 1) on 40 lines")
    assert (got["drafts"], got["accepted"], got["n"]) == (whole["drafts"], whole["accepted"], whole["n"])
    assert got["value"] == pytest.approx(whole["value"], rel=1e-12)
    assert got["value"] == pytest.approx(truth, abs=0.004)


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_a_line_with_no_mean_does_not_let_its_run_pass(size):
    """A line printed with ``nan`` for its mean says nothing about its drafts: the other lines of
    its run are still tested (before, one such line made a whole run pass, keeping drafted / k)."""
    lines, truth = lines_of(12, 30, 4, (1, 4), 0.7)
    nan_line = LINE.format(s=0, mal=float("nan"), at=0.0, dt=0.0, a=0, d=0, pp="nan, nan, nan, nan", r=0.0)
    lines.insert(10, nan_line.replace("0.0%", "nan%"))
    got = _pooled_in_runs(lines, size)
    assert "draft length varies" in got["method"]
    assert got["value"] == pytest.approx(truth, abs=0.004)


@pytest.mark.parametrize("size", [1, 1000])
def test_an_old_release_read_live_keeps_drafted_over_k(size):
    """vLLM < 0.9 printed its mean without the bonus token (the sum of the per-position rates). A
    live source's first lines are read under the newest era until the era settles: on that scale
    drafted / k breaks the means, on the old era's it holds, so the drafts stay drafted / k."""
    lines, truth = lines_of(13, 30, 3, (3,), 0.6)
    old = []
    for line in lines:
        head, rest = line.split("Mean acceptance length: ")
        mal, tail = rest.split(",", 1)
        old.append(f"{head}Mean acceptance length: {float(mal) - 1:.2f},{tail}")
    got = _pooled_in_runs(old, size)
    assert got.get("method") is None
    assert got["value"] == pytest.approx(truth, rel=1e-12)
