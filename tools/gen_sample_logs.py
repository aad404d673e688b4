"""Seeded generator for the synthetic inference-server logs in ``sample_logs/``.

    python tools/gen_sample_logs.py [--seed N] [--out-dir DIR]   # all sample files (default sample_logs/)
    python tools/gen_sample_logs.py --large [N] [--out PATH]     # N-line benchmark log (default 5,000,000)

Same seed gives the same bytes: only ``random.Random(int)``, %-formatting and integer arithmetic are
used (no clock, no numpy). The seed is ``SEED`` = 20261120 by default, and file k uses
``Random(seed + k)``. Formats: ``docs/formats.md``.

Files:
* ``sglang_eagle3_restart.log``: SGLang (Nov 2026, tp=1, no rank tag), EAGLE-3 on Llama-3.1-8B.
  Startup: ``server_args=ServerArgs(...)``, setup, uvicorn, then ``The server is fired up and
  ready to roll!``. Run 1's draft (``/models/eagle3-llama3.1-8b``, steps=3/topk=1/ndt=4) is wired
  to the wrong aux layers, so accept len is ~1.5. Ctrl+C follows. 1-2 minutes later, run 2
  (``...-fixed``, steps=5/topk=1/ndt=6) gets ~2.4.
* ``ab_a.log`` / ``ab_b.log``: same model, same start time (2026-11-20 12:00), same replayed
  workload. A: steps=3/topk=1/ndt=4, ~2.30. B: steps=5/topk=1/ndt=6, ~2.55. ~1,500 decode lines each.
* ``sglang_dp_attention.log``: dp_size=4, tp_size=4, enable_dp_attention, steps=3/topk=1/ndt=4.
  Ranks decode in lock-step. On each tick every busy rank prints ``[ts DPi TPi] Decode batch``,
  in shuffled order. An empty rank prints nothing (only while a burst drains). Rank means are
  2.60/2.70/2.50/2.65, with round-robin dispatch.
* ``vllm_v1_eagle3.log``: vLLM 0.11.2 V1, ``(APIServer pid=4321)``, EAGLE-3 with k=3. Each active
  10 s interval prints ``Engine 000:`` and then ``SpecDecoding metrics:`` (same timestamp).
  Idle intervals print nothing. ~300 pairs, plus access lines.
* ``--large N`` (not committed): one ``server_args`` line, then N lines from 2026-02-26, tp=2 (only
  ``TP0`` prints). ~80 % Decode, ~10 % Prefill, ~10 % access lines, ~10 lines/s. It is built from
  4,096 one-second blocks made from pools of formatted lines. A Feb 2026 build predates PR
  #23530, so its accept rate is AL / ndt (docs/formats.md, "What the rate means").

SGLang model, per rank:
* Poisson arrivals in bursts of U(45, 150) s at U(0.5, 3) req/s (DP: U(4, 10) over 4 ranks).
* Idle gaps of U(20, 80) s with no lines.
* Prompt ~ lognormal (median 700 tokens), with prefix-cache hits. Output ~ lognormal (median 1,000).
* A decode line every 40 steps (decode_log_interval). A step takes (6 + 1.1 steps + 0.12 bs) ms.
* Accept len:
  * A latent AR(1), m' = mu + 0.95 (m - mu) + N(0, 0.025).
  * Plus the batch's mean per-request offset, N(0, 0.3) per request, kept for the request's
    ~10-line life. This term makes consecutive lines autocorrelated.
  * Plus N(0, 0.15/sqrt(bs)) content noise and N(0, sqrt(0.6/(40 bs))) sampling noise, so the
    noise shrinks with #running-req.
  * The server's integer counters are then reproduced: forward_ct = 40 bs, and accepted is in
    [0, steps forward_ct]. AL = 1 + accepted/forward_ct (in [1, steps+1]).
    rate = accepted/(forward_ct (ndt-1)) = (AL-1)/(ndt-1) (PR #23530). Both are printed with %.2f.
* gen throughput = emitted tokens / time since the previous decode line, so it is tiny just
  after idle.
* token usage = #token / 480,224.

vLLM model:
* Concurrency is U(1, 10) per burst, +-1 per interval.
* num_drafts = bs x verify steps in 10 s, with a step of (7.5 + 0.25 bs) ms.
* Conditional acceptance drifts (AR(1)) around 0.80/0.74/0.70. acc_1 ~ Bin(num_drafts, p1) and
  acc_i ~ Bin(acc_(i-1), q_i), so the counts are non-increasing.
* MAL = 1 + sum(acc)/num_drafts, drafted = 3 num_drafts, per-position_i = acc_i/num_drafts.
* avg rate = 100 accepted/drafted, throughputs = tokens/10 s.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

SEED = 20261120
ROOT = Path(__file__).resolve().parent.parent
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
DRAFT = "/models/eagle3-llama3.1-8b"
MAX_TOKENS = 480_224  # max_total_num_tokens (KV pool) of the 8B model on one 80 GB GPU
INTERVAL = 40  # --decode-log-interval
ACCESS = 'INFO:     127.0.0.1:%d - "POST /v1/chat/completions HTTP/1.1" 200 OK'
UVICORN = (
    "Started server process [{pid}]",
    "Waiting for application startup.",
    "Application startup complete.",
)


@dataclass
class Spec:
    steps: int
    topk: int
    ndt: int
    mu: float  # mean accept len
    rate_era: str = "drafts"  # "drafts" = (AL-1)/(ndt-1) (>= Apr 2026); "ndt" = AL/ndt (Nov 2025-Apr 2026)


class Log:
    """Collects lines. Timestamps are float seconds after ``base``, printed floored."""

    def __init__(self, base: datetime):
        self.base, self.lines = base, []

    def stamp(self, t: float, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
        return (self.base + timedelta(seconds=math.floor(t))).strftime(fmt)

    def sgl(self, t: float, body: str, tag: str = "") -> None:
        self.lines.append(f"[{self.stamp(t)}{tag}] {body}")

    def vllm(self, t: float, proc: str, where: str, body: str) -> None:
        self.lines.append(f"({proc}) INFO {self.stamp(t, '%m-%d %H:%M:%S')} [{where}] {body}")

    def raw(self, line: str) -> None:
        self.lines.append(line)

    def write(self, path: Path) -> None:
        path.write_text("\n".join(self.lines) + "\n", encoding="utf-8", newline="\n")


def clamp(x, lo, hi):
    return lo if x < lo else hi if x > hi else x


def binom(rng: random.Random, n: int, p: float) -> int:
    """Bin(n, p) by its normal approximation (stable across Python versions)."""
    if n <= 0:
        return 0
    return clamp(round(n * p + rng.gauss(0.0, math.sqrt(n * p * (1.0 - p)))), 0, n)


# ---------------------------------------------------------------------------------- SGLang
# The repr of a 2026 ServerArgs, one enormous line per start; {x} fields are filled in with repr(x).
SERVER_ARGS = (
    "model_path={model}, tokenizer_path={model}, tokenizer_mode='auto', tokenizer_worker_num=1, "
    "skip_tokenizer_init=False, load_format='auto', model_loader_extra_config='{{}}', "
    "trust_remote_code=False, context_length=None, is_embedding=False, host='0.0.0.0', port={port}, "
    "dtype='auto', quantization=None, kv_cache_dtype='auto', mem_fraction_static=0.85, "
    "max_running_requests=48, max_queued_requests=None, max_total_tokens=None, chunked_prefill_size=8192, "
    "max_prefill_tokens=16384, schedule_policy='fcfs', schedule_conservativeness=1.0, page_size=1, "
    "device='cuda', tp_size={tp}, pp_size=1, stream_interval=1, stream_output=False, random_seed={seed}, "
    "watchdog_timeout=300, log_level='info', log_level_http=None, log_requests=False, show_time_cost=False, "
    "enable_metrics=False, decode_log_interval=40, api_key=None, served_model_name={model}, "
    "chat_template=None, file_storage_path='sglang_storage', reasoning_parser=None, tool_call_parser=None, "
    "dp_size={dp}, load_balance_method='round_robin', dist_init_addr=None, nnodes=1, node_rank=0, "
    "json_model_override_args='{{}}', preferred_sampling_params=None, enable_lora=None, lora_paths=None, "
    "max_loras_per_batch=8, attention_backend='fa3', sampling_backend='flashinfer', "
    "grammar_backend='xgrammar', speculative_algorithm='EAGLE3', speculative_draft_model_path={draft}, "
    "speculative_draft_model_revision=None, speculative_num_steps={steps}, speculative_eagle_topk={topk}, "
    "speculative_num_draft_tokens={ndt}, speculative_accept_threshold_single=1.0, "
    "speculative_accept_threshold_acc=1.0, speculative_token_map=None, speculative_attention_mode='prefill', "
    "speculative_draft_attention_backend=None, ep_size=1, moe_a2a_backend='none', moe_runner_backend='auto', "
    "enable_hierarchical_cache=False, cpu_offload_gb=0, disable_radix_cache=False, cuda_graph_max_bs=32, "
    "cuda_graph_bs=None, disable_cuda_graph=False, disable_custom_all_reduce=False, "
    "disable_overlap_schedule=False, enable_mixed_chunk=False, enable_dp_attention={dpa}, "
    "enable_torch_compile=False, torch_compile_max_bs=32, triton_attention_num_kv_splits=8, "
    "num_continuous_decode_steps=1, allow_auto_truncate=False, disaggregation_mode='null', "
    "num_reserved_decode_tokens=512"
)


def server_args(
    spec: Spec,
    draft: str,
    model: str = LLAMA,
    tp: int = 1,
    dp: int = 1,
    dpa: bool = False,
    port: int = 30000,
    seed: int = 42,
) -> str:
    values = dict(
        model=model,
        port=port,
        tp=tp,
        dp=dp,
        dpa=dpa,
        seed=seed,
        draft=draft,
        steps=spec.steps,
        topk=spec.topk,
        ndt=spec.ndt,
    )
    return "server_args=ServerArgs(" + SERVER_ARGS.format(**{k: repr(v) for k, v in values.items()}) + ")"


def accept_counts(rng: random.Random, target: float, bs: int, spec: Spec):
    """One 40-step window on one rank: (accept len, accept rate, emitted tokens), unrounded."""
    fct = INTERVAL * bs  # spec_num_forward_ct: batch size summed over the window
    x = clamp(target + rng.gauss(0.0, 0.15 / math.sqrt(bs)), 1.0, spec.steps + 1.0)
    acc = round((x - 1.0) * fct + rng.gauss(0.0, math.sqrt(0.6 * fct)))
    acc = clamp(acc, 0, spec.steps * fct)  # accepted drafts (bonus token not included)
    al = 1.0 + acc / fct
    rate = acc / (fct * (spec.ndt - 1)) if spec.rate_era == "drafts" else al / spec.ndt
    return al, rate, acc + fct


def decode_body(bs, tokens, al, rate, graph, thr, queue):
    return (
        f"Decode batch, #running-req: {bs}, #token: {tokens}, token usage: {tokens / MAX_TOKENS:.2f}, "
        f"accept len: {al:.2f}, accept rate: {rate:.2f}, cuda graph: {graph}, "
        f"gen throughput (token/s): {thr:.2f}, #queue-req: {queue}"
    )


def prefill_body(n, new, cached, tokens, running, queue, thr):
    return (
        f"Prefill batch, #new-seq: {n}, #new-token: {new}, #cached-token: {cached}, token usage: "
        f"{tokens / MAX_TOKENS:.2f}, #running-req: {running}, #queue-req: {queue}, cuda graph: False, "
        f"input throughput (token/s): {thr:.2f}"
    )


@dataclass
class Rank:
    """One scheduler (one DP rank): its running batch, waiting queue and acceptance state."""

    rng: random.Random
    spec: Spec
    tag: str
    t0: float
    running: list = field(default_factory=list)  # [kv tokens, tokens to generate, AL offset]
    queue: list = field(default_factory=list)  # (prompt, cached, output)

    def __post_init__(self):
        self.latent, self.t_dec, self.t_pre = self.spec.mu, self.t0, self.t0

    def step_time(self) -> float:
        return (6.0 + 1.1 * self.spec.steps + 0.12 * len(self.running)) / 1000.0

    def prefill(self, t: float):
        """Admit waiting requests (max 48 running, 8192-token budget): (body, seconds) or None."""
        if not self.queue or len(self.running) >= 48:
            return None
        before, n, new, cached = len(self.running), 0, 0, 0
        while self.queue and len(self.running) < 48 and (n == 0 or new < 8192):
            prompt, hit, out = self.queue.pop(0)
            self.running.append([prompt, out, self.rng.gauss(0.0, 0.3)])
            n, new, cached = n + 1, new + prompt - hit, cached + hit
        thr, self.t_pre = new / max(t - self.t_pre, 1e-3), t
        kv = sum(r[0] for r in self.running)
        return prefill_body(n, new, cached, kv, before, len(self.queue), thr), 0.004 + new / 25000.0

    def decode(self, t: float):
        """The window that ends at t: (body, number of requests that finished)."""
        sp, rng, bs = self.spec, self.rng, len(self.running)
        self.latent = sp.mu + 0.95 * (self.latent - sp.mu) + rng.gauss(0.0, 0.025)
        mix = sum(r[2] for r in self.running) / bs  # the requests in the batch: easy or hard text
        al, rate, emitted = accept_counts(rng, self.latent + mix, bs, sp)
        thr, self.t_dec = emitted / max(t - self.t_dec, 1e-3), t
        for r in self.running:
            got = max(1, round(emitted / bs * rng.uniform(0.8, 1.2)))
            r[0], r[1] = r[0] + got, r[1] - got
        kv = sum(r[0] for r in self.running)
        body = decode_body(bs, kv, al, rate, bs <= 32, thr, len(self.queue))
        self.running = [r for r in self.running if r[1] > 0]
        return body, bs - len(self.running)


def workload(seed: int, t0: float, rate_lo: float = 0.5, rate_hi: float = 3.0):
    """Endless (arrival time, prompt, cached, output): bursts of Poisson arrivals, then idle gaps."""
    rng, t = random.Random(seed), t0
    while True:
        end, rate = t + rng.uniform(45, 150), rng.uniform(rate_lo, rate_hi)
        while (t := t + rng.expovariate(rate)) <= end:
            prompt = clamp(round(rng.lognormvariate(math.log(700), 0.8)), 16, 16000)
            hit = min(prompt - 1, rng.choice((0, 0, 128, 256, 512, 512)))
            yield t, prompt, hit, clamp(round(rng.lognormvariate(math.log(1000), 0.6)), 16, 4096)
        t = end + rng.uniform(20, 80)


def sglang_startup(
    log: Log,
    rng: random.Random,
    t: float,
    args: str,
    tags,
    pid: int,
    port: int,
    spec: Spec,
    arch: str = "LlamaForCausalLM",
    shards: int = 4,
) -> float:
    bs = "[1, 2, 4, 8, 12, 16, 24, 32]"
    per_rank = [
        "Init torch distributed begin.",
        "Init torch distributed ends. mem usage=0.00 GB",
        "Load weight begin. avail mem=78.50 GB",
        None,  # None: the tqdm bar (no prefix)
        f"Load weight end. type={arch}, dtype=torch.bfloat16, avail mem=63.42 GB, mem usage=15.08 GB.",
        f"KV Cache is allocated. #tokens: {MAX_TOKENS}, K size: 29.31 GB, V size: 29.31 GB",
        "Memory pool end. avail mem=4.71 GB",
        f"Capture target decode CUDA graph begin. backend=full, num_tokens_per_req={spec.ndt}, bs={bs}, "
        "avail mem=4.55 GB",
        "Capture target decode CUDA graph end. elapsed=3.12 s, mem usage=0.41 GB, avail mem=4.14 GB",
        "Load weight begin. avail mem=4.14 GB",
        "Load weight end. type=LlamaForCausalLMEagle3, dtype=torch.bfloat16, avail mem=3.31 GB, "
        "mem usage=0.83 GB.",
        f"Capture draft decode CUDA graph begin. backend=full, num_tokens_per_req={spec.topk}, bs={bs}, "
        "avail mem=3.31 GB",
        f"Capture draft decode CUDA graph end. elapsed={rng.uniform(2, 4):.2f} s, mem usage=0.18 GB, "
        "avail mem=3.13 GB",
        f"max_total_num_tokens={MAX_TOKENS}, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        "max_running_requests=48, context_len=131072, available_gpu_mem=3.05 GB",
    ]
    log.sgl(t, args)
    t += rng.uniform(5, 9)
    for what in per_rank:
        if what is None:
            for i in range(shards + 1):
                eta = "?, ?" if i == 0 else f"00:{shards - i:02d}, {rng.uniform(1.1, 1.6):5.2f}"
                log.raw(
                    f"Loading safetensors checkpoint shards: {100 * i // shards:3d}% Completed | "
                    f"{i}/{shards} [00:{i:02d}<{eta}it/s]"
                )
            t += rng.uniform(3, 6)
            continue
        for tag in tags:
            log.sgl(t, what, tag)
        t += rng.uniform(0.2, 2.5)
    for what in UVICORN + (f"Uvicorn running on http://0.0.0.0:{port} (Press CTRL+C to quit)",):
        log.sgl(t, "INFO:     " + what.format(pid=pid))
    t += 1.0
    log.sgl(t, 'INFO:     127.0.0.1:%d - "GET /model_info HTTP/1.1" 200 OK' % rng.randrange(33000, 61000))
    for tag in tags:
        log.sgl(t, prefill_body(1, 7, 0, 7, 0, 0, 0.0), tag)
    t += rng.uniform(0.5, 1.5)
    log.sgl(t, 'INFO:     127.0.0.1:%d - "POST /generate HTTP/1.1" 200 OK' % rng.randrange(33000, 61000))
    log.sgl(t, "The server is fired up and ready to roll!")
    return t


def sglang_traffic(log: Log, rng: random.Random, ranks, t: float, arrivals, target: int) -> float:
    """Serve the arrivals (round-robin over ranks) until ``target`` decode lines, then drain."""
    n_dec, rr, nxt = 0, 0, next(arrivals)
    while True:
        while n_dec < target and nxt[0] <= t:
            ranks[rr % len(ranks)].queue.append(nxt[1:])
            rr, nxt = rr + 1, next(arrivals)
        if not any(r.running or r.queue for r in ranks):
            if n_dec >= target:
                return t
            t = nxt[0]  # idle: no lines at all
            continue
        cost = 0.0
        for r in ranks:
            if res := r.prefill(t):
                log.sgl(t, res[0], r.tag)
                cost = max(cost, res[1])
        active = [r for r in ranks if r.running]
        t += cost + INTERVAL * max(r.step_time() for r in active) * rng.uniform(0.97, 1.03)
        rng.shuffle(active)  # DP ranks log independently: their order within a tick varies
        done = 0
        for r in active:
            body, fin = r.decode(t)
            log.sgl(t, body, r.tag)
            n_dec, done = n_dec + 1, done + fin
        for _ in range(done):
            log.sgl(t, ACCESS % rng.randrange(33000, 61000))


def gen_restart(seed: int) -> Log:
    rng, log, t = random.Random(seed + 1), Log(datetime(2026, 11, 20, 9, 0, 0)), 1.0
    for spec, draft, pid, lines in (
        (Spec(3, 1, 4, 1.50), DRAFT, 1234, 750),
        (Spec(5, 1, 6, 2.40), DRAFT + "-fixed", 5678, 950),
    ):
        if pid != 1234:  # Ctrl+C on the broken server, then a restart 1-2 minutes later
            t += rng.uniform(10, 30)
            log.raw("^C")
            for what in (
                "Shutting down",
                "Waiting for application shutdown.",
                "Application shutdown complete.",
                "Finished server process [1234]",
            ):
                log.sgl(t, "INFO:     " + what)
            t += rng.uniform(60, 120)
        t = sglang_startup(log, rng, t, server_args(spec, draft), [""], pid, 30000, spec)
        rank = Rank(random.Random(rng.randrange(1 << 30)), spec, "", t)
        t = sglang_traffic(log, rng, [rank], t, workload(seed + 11 + pid, t + 20), lines)
    return log


def gen_ab(seed: int, which: str) -> Log:
    spec, k, pid, port = {
        "a": (Spec(3, 1, 4, 2.30), 2, 2101, 30000),
        "b": (Spec(5, 1, 6, 2.55), 3, 2202, 30001),
    }[which]
    rng, log = random.Random(seed + k), Log(datetime(2026, 11, 20, 12, 0, 0))
    t = sglang_startup(log, rng, 1.0, server_args(spec, DRAFT, port=port), [""], pid, port, spec)
    rank = Rank(random.Random(rng.randrange(1 << 30)), spec, "", t)
    sglang_traffic(log, rng, [rank], t, workload(seed + 12, 90.0), 1500)  # the same workload for A and B
    return log


def gen_dp(seed: int) -> Log:
    rng, log, spec = random.Random(seed + 4), Log(datetime(2026, 11, 20, 10, 0, 0)), Spec(3, 1, 4, 0.0)
    tags = [f" DP{i} TP{i}" for i in range(4)]
    model, draft = "Qwen/Qwen3-30B-A3B-Instruct-2507", "/models/eagle3-qwen3-30b-a3b"
    args = server_args(spec, draft, model, tp=4, dp=4, dpa=True)
    t = sglang_startup(log, rng, 0.0, args, tags, 3456, 30000, spec, "Qwen3MoeForCausalLM", 16)
    ranks = [
        Rank(random.Random(rng.randrange(1 << 30)), Spec(3, 1, 4, mu), tag, t)
        for mu, tag in zip((2.60, 2.70, 2.50, 2.65), tags)
    ]
    sglang_traffic(log, rng, ranks, t, workload(seed + 14, t + 15, rate_lo=4.0, rate_hi=10.0), 1500)
    return log


# ---------------------------------------------------------------------------------- vLLM
def gen_vllm(seed: int) -> Log:
    rng, k, api, core = random.Random(seed + 5), 3, "APIServer pid=4321", "EngineCore_DP0 pid=4455"
    log = Log(datetime(2026, 11, 20, 11, 0, 0))
    log.raw(f"INFO {log.stamp(0, '%m-%d %H:%M:%S')} [__init__.py:216] Automatically detected platform cuda.")
    spec_cfg = {"method": "eagle3", "model": DRAFT, "num_speculative_tokens": k}
    for proc, dt, where, body in [
        (api, 0, "api_server.py:1287", "vLLM API server version 0.11.2"),
        (
            api,
            0,
            "cli_args.py:309",
            "non-default args: %r" % {"model": LLAMA, "speculative_config": spec_cfg},
        ),
        (api, 7, "model.py:547", "Resolved architecture: LlamaForCausalLM"),
        (api, 7, "model.py:1510", "Using max model len 131072"),
        (api, 8, "scheduler.py:205", "Chunked prefill is enabled with max_num_batched_tokens=8192."),
        (
            core,
            14,
            "parallel_state.py:1208",
            "rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, TP rank 0, EP rank 0",
        ),
        (core, 14, "gpu_model_runner.py:2602", f"Starting to load model {LLAMA}..."),
        (core, 19, "default_loader.py:267", "Loading weights took 3.84 seconds"),
        (core, 19, "gpu_model_runner.py:2623", "Loading drafter model..."),
        (core, 20, "gpu_model_runner.py:2653", "Model loading took 15.91 GiB and 5.77 seconds"),
        (core, 36, "kv_cache_utils.py:1087", "GPU KV cache size: 428,960 tokens"),
        (core, 45, "gpu_model_runner.py:3480", "Graph capturing finished in 9 secs, took 0.61 GiB"),
        (core, 45, "core.py:210", "init engine (profile, create kv cache, warmup model) took 28.40 seconds"),
        (api, 46, "api_server.py:1912", "Starting vLLM API server 0 on http://0.0.0.0:8000"),
    ]:
        log.vllm(dt, proc, where, body)
    for what in UVICORN:
        log.raw(f"({api}) INFO:     " + what.format(pid=4321))
    cond = [0.80, 0.74, 0.70]  # conditional acceptance at positions 1..3; AR(1) around these
    lat, hits, queries, t, pairs = list(cond), 0, 0, 50.0, 0  # the stats logger ticks every 10 s
    while pairs < 300:
        t += rng.uniform(20, 80) // 10 * 10  # idle: the logger runs at debug level, no lines
        level, n_int = rng.uniform(1, 10), rng.randint(3, 18)
        for i in range(n_int + 1):
            t += 10.0
            running = 0 if i == n_int else max(1, round(level + rng.uniform(-1, 1)))
            busy = rng.uniform(0.2, 0.9) if i in (0, n_int) else 1.0  # a burst starts/ends mid-interval
            bs = max(running, 1)
            nd = round(10.0 / ((7.5 + 0.25 * bs) / 1000.0) * busy * bs * rng.uniform(0.9, 1.0))
            acc, prev = [], nd
            for j in range(k):
                lat[j] = cond[j] + 0.9 * (lat[j] - cond[j]) + rng.gauss(0.0, 0.012)
                prev = binom(rng, prev, clamp(lat[j] + rng.gauss(0, 0.03 / math.sqrt(bs)), 0.05, 0.99))
                acc.append(prev)
            accepted, drafted, generated = sum(acc), k * nd, nd + sum(acc)
            new_reqs = max(0, round(generated / 2000 + rng.uniform(-0.5, 0.5)))
            prompt = sum(round(rng.lognormvariate(math.log(700), 0.8)) for _ in range(new_reqs))
            cached = sum(rng.choice((0, 0, 128, 256, 512)) for _ in range(new_reqs))
            hits, queries = hits + cached, queries + prompt + cached
            for _ in range(new_reqs):
                log.raw(f"({api}) " + ACCESS % rng.randrange(33000, 61000))
            waiting = 0 if level < 8 else rng.randint(0, 3)
            kv = 100.0 * running * rng.uniform(900, 1500) / 428960
            log.vllm(
                t,
                api,
                "loggers.py:271",
                f"Engine 000: Avg prompt throughput: {prompt / 10:.1f} tokens/s, Avg generation "
                f"throughput: {generated / 10:.1f} tokens/s, Running: {running} reqs, Waiting: "
                f"{waiting} reqs, GPU KV cache usage: {kv:.1f}%, Prefix cache hit rate: "
                f"{100.0 * hits / max(queries, 1):.1f}%",
            )
            per_pos = ", ".join(f"{a / nd:.3f}" for a in acc)
            log.vllm(
                t,
                api,
                "metrics.py:101",
                f"SpecDecoding metrics: Mean acceptance length: {1 + accepted / nd:.2f}, Accepted "
                f"throughput: {accepted / 10:.2f} tokens/s, Drafted throughput: {drafted / 10:.2f} "
                f"tokens/s, Accepted: {accepted} tokens, Drafted: {drafted} tokens, Per-position "
                f"acceptance rate: {per_pos}, Avg Draft acceptance rate: {100.0 * accepted / drafted:.1f}%",
            )
            pairs += 1
    return log


# ---------------------------------------------------------------------------------- large mode
def write_large(path: Path, n: int, seed: int) -> None:
    """N lines after one server_args line, from 4,096 pre-built one-second blocks (~4 s per 5M lines)."""
    rng = random.Random(seed + 6)
    spec = Spec(3, 1, 4, 2.50, rate_era="ndt")  # a Feb 2026 build: rate = AL / ndt
    dec, latent, bs = [], spec.mu, 24
    for _ in range(16384):
        latent = spec.mu + 0.95 * (latent - spec.mu) + rng.gauss(0.0, 0.025)
        bs = clamp(bs + rng.randint(-2, 2), 1, 48)
        al, rate, emitted = accept_counts(rng, latent, bs, spec)
        thr = emitted / (INTERVAL * (9.3 + 0.12 * bs) / 1000.0) * rng.uniform(0.9, 1.0)
        queue = rng.randint(0, 6) if bs > 44 else 0
        body = decode_body(bs, bs * rng.randint(600, 2400), al, rate, bs <= 32, thr, queue)
        dec.append(" TP0] " + body + "\n")
    pre, acc = [], []
    for _ in range(2048):
        m, running = rng.randint(1, 4), rng.randint(0, 48)
        new = sum(round(rng.lognormvariate(math.log(700), 0.8)) for _ in range(m))
        kv, queue = running * rng.randint(600, 2400) + new, rng.choice((0, 0, 0, 1, 3))
        thr = new / rng.uniform(0.05, 0.5)
        pre.append(
            " TP0] " + prefill_body(m, new, m * rng.choice((0, 128, 512)), kv, running, queue, thr) + "\n"
        )
        acc.append("] " + ACCESS % rng.randrange(33000, 61000) + "\n")
    blocks, di = [], 0
    for _ in range(4096):  # one block = one second of log, written as "[timestamp".join(block)
        block = [""]
        for _ in range(rng.randint(6, 14)):
            u = rng.random()
            block.append(dec[di % len(dec)] if u < 0.8 else rng.choice(pre if u < 0.9 else acc))
            di += u < 0.8
        blocks.append(block)
    start, secs, written, minute = datetime(2026, 2, 26, 14, 0, 0), [f"{s:02d}" for s in range(60)], 0, 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write(
            f"[{start:%Y-%m-%d %H:%M:%S}] "
            + server_args(spec, DRAFT, tp=2, seed=rng.randrange(1 << 30))
            + "\n"
        )
        while written < n:
            head, chunk = (start + timedelta(minutes=minute)).strftime("[%Y-%m-%d %H:%M:"), []
            for s in secs:
                block = blocks[rng.randrange(4096)][: n - written + 1]
                chunk.append((head + s).join(block))
                written += len(block) - 1
                if written >= n:
                    break
            f.write("".join(chunk))
            minute += 1


# ---------------------------------------------------------------------------------- main
GENERATORS = {
    "sglang_eagle3_restart.log": gen_restart,
    "ab_a.log": lambda seed: gen_ab(seed, "a"),
    "ab_b.log": lambda seed: gen_ab(seed, "b"),
    "sglang_dp_attention.log": gen_dp,
    "vllm_v1_eagle3.log": gen_vllm,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write the seeded sample logs (see the module docstring).")
    ap.add_argument("--seed", type=int, default=SEED, help=f"random seed (default {SEED})")
    ap.add_argument("--out-dir", type=Path, default=ROOT / "sample_logs", help="default: sample_logs/")
    ap.add_argument(
        "--large",
        type=int,
        nargs="?",
        const=5_000_000,
        metavar="N",
        help="write an N-line SGLang benchmark log instead (default N: 5,000,000)",
    )
    ap.add_argument("--out", type=Path, help="output file for --large (default: bench/out/large_N.log)")
    args = ap.parse_args(argv)
    if args.large is not None:
        out = args.out or ROOT / "bench" / "out" / f"large_{args.large}.log"
        write_large(out, args.large, args.seed)
        print(out)
        return 0
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, gen in GENERATORS.items():
        gen(args.seed).write(args.out_dir / name)
        print(f"{args.out_dir / name}  {(args.out_dir / name).stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
