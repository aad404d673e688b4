"""Seeded generators and cells for the calibration of verdicts and intervals (issue 21), shared by
tests/unit/test_calibration_cells.py (few replicates, binomial bounds) and
bench/bench_calibration.py (≥ 400 replicates, the table in docs/statistics.md).

Every replicate goes through the path of ``summary --json``: a log text is written, read by
:func:`tui.core.pipeline.whole.summarize_stream`, and compared by the two functions that
:func:`tui.core.stats.verdicts.comparison` calls for ``accept_len`` and
``accept_len_load_adjusted`` (:func:`accept_len_verdict`, :func:`load_verdict`; the rest of
``comparison``, e.g. which accept-rate formula each side printed, costs more than the verdict). Coverage is read from the interval the summary prints
for side A (``accept_len.ci95`` of the mean of lines, ``accept_len.pooled.ci95`` for counts; the
load-adjusted cells: the interval of B − A around the true 0). An ``insufficient`` verdict still
prints its interval, and that interval counts: it must cover too.
"""

from __future__ import annotations

import io
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from tui.core.pipeline.whole import summarize_stream
from tui.core.stats.compare import compare_accept_len
from tui.core.stats.load_compare import compare_load_adjusted
from tui.core.stats.verdicts import last_measured

MEAN = 2.5  # true mean accept len of the mean-of-lines cells


# -- value generators --------------------------------------------------------------------------
def ar1(rng: random.Random, n: int, phi: float, mean: float = MEAN, sd: float = 0.5) -> list[float]:
    """Stationary AR(1) accept lengths, printed to 0.01 and clipped to [1, 4] (k = 3)."""
    x, out, innov = rng.gauss(0.0, sd), [], sd * math.sqrt(1.0 - phi * phi)
    for _ in range(n):
        out.append(min(4.0, max(1.0, round(mean + x, 2))))
        x = phi * x + rng.gauss(0.0, innov)
    return out


def regime(rng: random.Random, n: int, shift: float = 0.0, dwell: float = 50.0) -> list[float]:
    """A traffic mix that flips: levels 2.2 / 2.8 (mean 2.5), geometric dwell times of mean
    ``dwell`` records, noise sd 0.3 per line."""
    high = rng.random() < 0.5
    out = []
    for _ in range(n):
        if rng.random() < 1.0 / dwell:
            high = not high
        out.append(round((2.8 if high else 2.2) + shift + rng.gauss(0.0, 0.3), 2))
    return out


def cycle(rng: random.Random, n: int, shift: float = 0.0) -> list[float]:
    """A slow cycle: ±0.2 sinusoid of period n/3 (random phase) around 2.5, noise sd 0.3."""
    period, phase = n / 3.0, rng.random() * 2.0 * math.pi
    return [
        round(MEAN + shift + 0.2 * math.sin(2.0 * math.pi * i / period + phase) + rng.gauss(0.0, 0.3), 2)
        for i in range(n)
    ]


@dataclass(frozen=True)
class RegimeSpec:
    """One generator of the regime family (issue 30): ``levels`` visited in turn (from the
    current one to any other, uniformly, with probability 1/``dwell`` per record: geometric dwell
    times of mean ``dwell``; each level equally often in the long run), under noise of sd
    ``noise`` that is an AR(1) of coefficient ``phi`` (0: independent)."""

    levels: tuple[float, ...]
    dwell: float
    noise: float
    phi: float

    @property
    def mean(self) -> float:
        """The long-run mean (the stationary law is uniform over the levels)."""
        return math.fsum(self.levels) / len(self.levels)

    def label(self) -> str:
        lv = "/".join(f"{x:.2f}" for x in self.levels)
        return f"{lv} dwell {self.dwell:.0f} sd {self.noise:.2f} phi {self.phi:.2f}"

    def path(self, rng: random.Random, n: int) -> list[float]:
        """The latent level of each of ``n`` records (the stationary start: a level at random)."""
        k = len(self.levels)
        at = rng.randrange(k)
        out = []
        for _ in range(n):
            if rng.random() < 1.0 / self.dwell:
                at = (at + 1 + rng.randrange(k - 1)) % k
            out.append(self.levels[at])
        return out

    def noise_path(self, rng: random.Random, n: int) -> list[float]:
        e, innov, out = rng.gauss(0.0, self.noise), self.noise * math.sqrt(1.0 - self.phi**2), []
        for _ in range(n):
            out.append(e)
            e = self.phi * e + rng.gauss(0.0, innov)
        return out


def draw_regime(rng: random.Random, centre: tuple[float, float], gap: tuple[float, float]) -> RegimeSpec:
    """A generator drawn at random from the family: 2 or 3 levels around a centre (uniform in
    ``centre``) spanning a gap (uniform in ``gap``), dwell times of mean log-uniform in 20…500
    records, noise sd uniform in 0.15…0.4, independent or an AR(1) of φ uniform in 0.3…0.8."""
    c, g = rng.uniform(*centre), rng.uniform(*gap)
    levels = (c - g / 2, c + g / 2) if rng.random() < 0.5 else (c - g / 2, c, c + g / 2)
    dwell = math.exp(rng.uniform(math.log(20.0), math.log(500.0)))
    phi = 0.0 if rng.random() < 0.5 else rng.uniform(0.3, 0.8)
    return RegimeSpec(levels, dwell, rng.uniform(0.15, 0.4), phi)


# the held-out generator of issue 30: SGLang means, levels 2.2 / 2.8, stay probability 0.98,
# AR(1) noise; and its pooled twin (vLLM counts, 1.2 / 1.8 accepted tokens per draft)
HELD_OUT = RegimeSpec((2.2, 2.8), 50.0, 0.3, 0.5)
HELD_OUT_POOLED = RegimeSpec((1.2, 1.8), 50.0, 0.3, 0.5)


def regime_values(
    rng: random.Random, spec: RegimeSpec, n: int, shift: float = 0.0
) -> tuple[list[float], float]:
    """Accept lengths of ``spec`` printed to 0.01, clipped to [1, 4]; and the mean of the
    process seen (the latent levels of these records, averaged)."""
    lv, e = spec.path(rng, n), spec.noise_path(rng, n)
    vals = [min(4.0, max(1.0, round(x + shift + y, 2))) for x, y in zip(lv, e)]
    return vals, math.fsum(lv) / n + shift


def regime_counts(
    rng: random.Random, spec: RegimeSpec, n: int, spread: float = 10.0
) -> tuple[list[int], list[int], float]:
    """vLLM counts whose accepted tokens per draft follow ``spec`` (levels in tokens per draft),
    drafts per interval lognormal (95th/5th percentile ``spread``), clipped to [0, 3] per draft;
    and the pooled truth of the process seen, ``1 + Σ level·D / ΣD``."""
    sigma = math.log(spread) / (2 * 1.6449)
    lv, e = spec.path(rng, n), spec.noise_path(rng, n)
    ds = [max(1, round(200.0 * math.exp(sigma * rng.gauss(0.0, 1.0)))) for _ in range(n)]
    acc = [round(min(3.0, max(0.0, x + y)) * d) for x, y, d in zip(lv, e, ds)]
    return ds, acc, 1.0 + math.fsum(x * d for x, d in zip(lv, ds)) / sum(ds)


def drafts_and_accepted(
    rng: random.Random, n: int, spread: float, phi: float, big: bool = False
) -> tuple[list[int], list[int]]:
    """Per-interval drafts (lognormal, 95th/5th percentile = ``spread``; ``big``: one interval
    at a random place has 1,000× the drafts of the others, which all have 100) and accepted
    tokens: accepted per draft 1.5 − 0.15·z_D + AR(1) noise (sd 0.4), acceptance falling as the
    drafts rise, as in real servers; clipped to [0, 3]."""
    sigma = math.log(spread) / (2 * 1.6449) if spread > 1 else 0.0
    e, innov = rng.gauss(0.0, 0.4), 0.4 * math.sqrt(1.0 - phi * phi)
    at = rng.randrange(n) if big else -1
    ds, acc = [], []
    for i in range(n):
        if big:
            z, d = 0.0, 100 * (1000 if i == at else 1)
        else:
            z = rng.gauss(0.0, 1.0)
            d = max(1, round(200.0 * math.exp(sigma * z)))
        a = min(3.0, max(0.0, 1.5 - 0.15 * z + e))
        ds.append(d)
        acc.append(round(a * d))
        e = phi * e + rng.gauss(0.0, innov)
    return ds, acc


_truth_cache: dict[tuple[float, bool], float] = {}


def pooled_truth(spread: float, big: bool = False) -> float:
    """1 + E[accepted]/E[drafts] of :func:`drafts_and_accepted` (the marginal law: φ = 0),
    by a seeded Monte Carlo of 400,000 intervals (its error is below 0.002)."""
    key = (spread, big)
    if key not in _truth_cache:
        rng = random.Random(12345)
        if big:  # every interval has the same law of acceptance: the mean accepted per draft
            ds, acc = drafts_and_accepted(rng, 400_000, 1.0, 0.0)
        else:
            ds, acc = drafts_and_accepted(rng, 400_000, spread, 0.0)
        _truth_cache[key] = 1.0 + sum(acc) / sum(ds)
    return _truth_cache[key]


def load_series(
    rng: random.Random, n: int, phi: float, load_scale: float, shift: float = 0.0
) -> tuple[list[float], list[int]]:
    """Accept lengths that fall with the batch size: 2.9 − 0.1·log2(running) + AR(1) noise (sd
    0.3); the batch size wanders slowly (log2 an AR(1) of φ 0.95 around log2(8·load_scale))."""
    lg, e = rng.gauss(0.0, 1.0), rng.gauss(0.0, 0.3)
    inn_l, inn_e = math.sqrt(1 - 0.95**2), 0.3 * math.sqrt(1.0 - phi * phi)
    vals, run = [], []
    for _ in range(n):
        r = max(1, min(512, round(8.0 * load_scale * 2.0**lg)))
        vals.append(min(4.0, max(1.0, round(2.9 - 0.1 * math.log2(r) + shift + e, 2))))
        run.append(r)
        lg = 0.95 * lg + rng.gauss(0.0, inn_l)
        e = phi * e + rng.gauss(0.0, inn_e)
    return vals, run


# -- log texts ---------------------------------------------------------------------------------
def sglang_log(values: list[float], running: list[int] | None = None) -> bytes:
    """A 2026 SGLang log (steps 3, topk 1) printing ``values`` as accept len."""
    lines = []
    for i, al in enumerate(values):
        s = 10 * i
        ts = f"2026-05-01 {10 + s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"
        r = running[i] if running is not None else 8
        lines.append(
            f"[{ts} TP0] Decode batch, #running-req: {r}, #token: 4000, token usage: 0.10, "
            f"accept len: {al:.2f}, accept rate: {(al - 1) / 3:.2f}, cuda graph: True, "
            f"gen throughput (token/s): 250.00, #queue-req: 0, \n"
        )
    return "".join(lines).encode()


def vllm_log(drafts: list[int], accepted: list[int]) -> bytes:
    """A vLLM V1 log (k = 3) printing accepted and drafted tokens per interval."""
    proc = "(APIServer pid=1)"
    out = [
        f"{proc} INFO 05-06 07:59:00 [api_server.py:1287] vLLM API server version 0.11.0\n",
        f"{proc} INFO 05-06 07:59:01 [utils.py:233] non-default args: {{'speculative_config': "
        "{'method': 'eagle3', 'num_speculative_tokens': 3}}\n",
    ]
    for i, (d, a) in enumerate(zip(drafts, accepted)):
        t = 8 * 3600 + 10 * i
        stamp = f"05-{6 + t // 86400:02d} {t // 3600 % 24:02d}:{t // 60 % 60:02d}:{t % 60:02d}"
        rate = a / (3 * d)
        out.append(
            f"{proc} INFO {stamp} [metrics.py:101] SpecDecoding metrics: Mean acceptance length: "
            f"{1 + a / d:.2f}, Accepted throughput: {a / 10:.2f} tokens/s, Drafted throughput: "
            f"{3 * d / 10:.2f} tokens/s, Accepted: {a} tokens, Drafted: {3 * d} tokens, "
            f"Per-position acceptance rate: {rate:.3f}, {rate:.3f}, {rate:.3f}, "
            f"Avg Draft acceptance rate: {100 * rate:.1f}%\n"
        )
    return "".join(out).encode()


def summarize(text: bytes, name: str):
    return summarize_stream(io.BytesIO(text), name).stats


def accept_len_verdict(a, b) -> dict:
    """``accept_len_verdict(a, b)`` of summary --json."""
    return compare_accept_len(last_measured(a).all, last_measured(b).all).to_dict()


def load_verdict(a, b) -> dict:
    """``load_verdict(a, b)`` of summary --json."""
    sa, sb = last_measured(a), last_measured(b)
    return compare_load_adjusted(sa.load, sb.load, sa.all.running_req.mean, sb.all.running_req.mean)


# -- cells -------------------------------------------------------------------------------------
@dataclass
class Tally:
    reps: int = 0
    false: int = 0  # A/A pairs called higher/lower
    insufficient: int = 0  # A/A pairs answered insufficient
    covered: int = 0  # intervals that contain the truth
    intervals: int = 0  # intervals printed
    found: int = 0  # shifted pairs called higher (power cells)
    shifted: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    seen_covered: int = 0  # regime cells: intervals that contain the mean of the process seen
    one_level: int = 0  # regime cells: logs (side A) that never left the level they began in

    def add_pair(self, c: dict) -> None:
        """An A/A pair's verdict (``c``: a comparison as summary --json prints it)."""
        self.reps += 1
        self.false += c["verdict"] in ("higher", "lower")
        if c["verdict"] == "insufficient":
            self.insufficient += 1
            self.add_reason(c["reason"])

    def add_interval(self, ci, truth: float) -> None:
        """An interval printed (None: none), and whether it holds the truth."""
        if ci is not None:
            self.intervals += 1
            self.covered += ci[0] <= truth <= ci[1]

    def add_reason(self, reason: str) -> None:
        key = reason.removeprefix("A: ").removeprefix("B: ").split(" (")[0].split(":")[0][:60]
        self.reasons[key] = self.reasons.get(key, 0) + 1


Gen = Callable[[random.Random, int, float], list[float]]


def _lines_ci(stats) -> tuple[float, float] | None:
    e = last_measured(stats).all.accept_len.estimate()
    return e.ci95()


def lines_cell(gen: Gen, n: int, reps: int, seed: int, shift: float | None = None) -> Tally:
    """Mean-of-lines cell: A/A pairs (false, insufficient), coverage of A's interval of the true
    mean 2.5; with ``shift``, also pairs A / A+shift (found = called higher)."""
    rng = random.Random(seed)
    t = Tally()
    for _ in range(reps):
        a = summarize(sglang_log(gen(rng, n, 0.0)), "a")
        b = summarize(sglang_log(gen(rng, n, 0.0)), "b")
        c = accept_len_verdict(a, b)
        t.add_pair(c)
        t.add_interval(_lines_ci(a), MEAN)
        if shift is not None:
            s = summarize(sglang_log(gen(rng, n, shift)), "s")
            t.shifted += 1
            t.found += accept_len_verdict(a, s)["verdict"] == "higher"
    return t


def pooled_cell(n: int, spread: float, phi: float, reps: int, seed: int, big: bool = False) -> Tally:
    """Pooled cell (vLLM counts): A/A pairs and coverage of 1 + E[accepted]/E[drafts]."""
    rng = random.Random(seed)
    truth = pooled_truth(spread, big)
    t = Tally()
    for _ in range(reps):
        a = summarize(vllm_log(*drafts_and_accepted(rng, n, spread, phi, big)), "a")
        b = summarize(vllm_log(*drafts_and_accepted(rng, n, spread, phi, big)), "b")
        c = accept_len_verdict(a, b)
        assert c["estimator"] == "pooled"
        t.add_pair(c)
        t.add_interval(last_measured(a).all.pooled_len.estimate().ci95(), truth)
    return t


def regime_cell(
    spec: RegimeSpec, n: int, reps: int, seed: int, pooled: bool = False, shift: float | None = None
) -> Tally:
    """A cell of the regime family (issue 30): A/A pairs of ``spec`` (SGLang values, or vLLM
    counts with ``pooled``); coverage of the long-run mean (``covered``) and of the mean of the
    process seen (``seen_covered``) by A's interval; ``one_level``: A never left its first level;
    with ``shift`` (means), pairs A / A+shift (found = called higher)."""
    rng = random.Random(seed)
    t = Tally()
    for _ in range(reps):
        state = rng.getstate()
        first = spec.path(rng, n)
        rng.setstate(state)  # the same draws again: A's path, to tell whether it switched
        t.one_level += len(set(first)) == 1
        if pooled:
            da, aa, seen = regime_counts(rng, spec, n)
            db, ab, _ = regime_counts(rng, spec, n)
            a, b = summarize(vllm_log(da, aa), "a"), summarize(vllm_log(db, ab), "b")
            truth, ci = 1.0 + spec.mean, last_measured(a).all.pooled_len.estimate().ci95()
        else:
            va, seen = regime_values(rng, spec, n)
            vb, _ = regime_values(rng, spec, n)
            a, b = summarize(sglang_log(va), "a"), summarize(sglang_log(vb), "b")
            truth, ci = spec.mean, _lines_ci(a)
        c = accept_len_verdict(a, b)
        assert c["estimator"] == ("pooled" if pooled else "mean_of_lines")
        t.add_pair(c)
        t.add_interval(ci, truth)
        t.seen_covered += ci is not None and ci[0] <= seen <= ci[1]
        if shift is not None and not pooled:
            s = summarize(sglang_log(regime_values(rng, spec, n, shift)[0]), "s")
            t.shifted += 1
            t.found += accept_len_verdict(a, s)["verdict"] == "higher"
    return t


def load_cell(n: int, phi: float, scale_b: float, reps: int, seed: int) -> Tally:
    """Load-adjusted cell: A at load 8, B at ``scale_b``× that, the same drafts (true B − A = 0
    within every batch size); false = the load-adjusted verdict says higher/lower; coverage =
    its interval contains 0."""
    rng = random.Random(seed)
    t = Tally()
    for _ in range(reps):
        a = summarize(sglang_log(*load_series(rng, n, phi, 1.0)), "a")
        b = summarize(sglang_log(*load_series(rng, n, phi, scale_b)), "b")
        c = load_verdict(a, b)
        t.add_pair(c)
        t.add_interval(c["ci95"], 0.0)
    return t


# -- binomial bounds ---------------------------------------------------------------------------
def binom_sf(k: int, n: int, p: float) -> float:
    """P(X ≥ k) for X ~ Binomial(n, p)."""
    return math.fsum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return c - h, c + h
