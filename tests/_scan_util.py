"""Generated logs and result comparisons shared by the tests: sglang, vLLM and llama.cpp lines from
a seed, single vLLM spec lines, an old vLLM log (its year from its mtime), a whole read with and
without the fast scanner, and ``same`` (equal up to float summation order)."""

from __future__ import annotations

import calendar
import io
import os
import random
from pathlib import Path

import pytest

from tui.core.formats.fastscan import scan_chunk
from tui.core.pipeline.whole import Summarizer, iter_chunks


def decode_line(rng: random.Random, ts: str, tag: str, variant: int = 0) -> str:
    al = rng.uniform(1.0, 4.0)
    sep = "," if variant % 2 == 0 else "."
    tail = ", " if variant % 3 == 0 else ""
    graph = rng.choice(["cuda", "npu"])
    return (
        f"[{ts}{tag}] Decode batch{sep} #running-req: {rng.randint(1, 64)}, #token: {rng.randint(1, 99999)}, "
        f"token usage: {rng.random():.2f}, accept len: {al:.2f}, accept rate: {(al - 1) / 3:.2f}, {graph} graph: "
        f"{rng.choice(['True', 'False'])}, gen throughput (token/s): {rng.uniform(1, 3000):.2f}, "
        f"#queue-req: {rng.randint(0, 9)}{tail}"
    )


def make_log(seed: int, n: int, odd_every: int = 0, tags=(" TP0",)) -> bytes:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        ts = f"2026-05-{1 + i // 86400 % 28:02d} {i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}"
        r = rng.random()
        if odd_every and i % odd_every == odd_every - 1:
            out.append(rng.choice(ODD).replace("TS", ts))
        elif r < 0.8:
            out.append(decode_line(rng, ts, rng.choice(tags), i))
        elif r < 0.9:
            out.append(
                f"[{ts}] Prefill batch, #new-seq: 1, #new-token: 9, #cached-token: 0, token usage: 0.01, "
                f"#running-req: 3, #queue-req: 0"
            )
        else:
            out.append(
                f'[{ts}] INFO:     127.0.0.1:{rng.randint(1000, 9999)} - "POST /generate HTTP/1.1" 200 OK'
            )
    return ("\n".join(out) + "\n").encode()


ODD = [
    "[TS] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4)",
    "[TS] The server is fired up and ready to roll!",
    "[TS TP0] Decode batch, #running-req: 3, #token: 9, token usage: 0.01, cuda graph: True, gen throughput (token/s): 3.00, #queue-req: 0",
    "[TS TP0] Decode batch, #running-req: x, accept len: 2.00",
    "> [TS TP0] Decode batch, #running-req: 3, #token: 9, token usage: 0.01, accept len: 2.00, accept rate: 0.33, cuda graph: True, gen throughput (token/s): 3.00, #queue-req: 0`",
    "[TS DP1 TP1] Decode batch, #running-req: 3, #token: 9, token usage: 0.01, accept len: 3.00, accept rate: 0.67, cuda graph: True, gen throughput (token/s): 3.00, #queue-req: 0",
    "sever logs: [TS TP0] Decode batch, #running-req: 3, #token: 9, token usage: 0.01, accept len: 2.50, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 3.00, #queue-req: 0",
    "(APIServer pid=1) INFO 05-15 13:53:53 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.81, Accepted: 472 tokens, Drafted: 783 tokens, Per-position acceptance rate: 0.839, 0.605, 0.364, Avg Draft acceptance rate: 60.3%",
    "\x1b[1;36m[TS TP0] Decode batch, #running-req: 3, #token: 9, token usage: 0.01, accept len: 2.25, accept rate: 0.42, cuda graph: True, gen throughput (token/s): 3.00, #queue-req: 0",
]


def slow_result(data: bytes) -> dict:
    s = Summarizer("x")
    for off, buf in iter_chunks(io.BytesIO(data), 1 << 16):
        s.feed(buf, off, None)
    return s.result()


def fast_result(data: bytes, chunk: int = 1 << 16) -> tuple[dict, Summarizer]:
    s = Summarizer("x")
    for off, buf in iter_chunks(io.BytesIO(data), chunk):
        s.feed(buf, off, scan_chunk(buf, s.year) if s.can_fast else None)
    return s.result(), s


def same(a: dict, b: dict) -> None:
    """Equal up to float summation order (1e-9 relative)."""
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-9, abs=1e-12)
    else:
        assert a == b


PROC = "(APIServer pid=7)"


def stamp(rng: random.Random, i: int) -> str:
    frac = rng.choice(["", ".5", f".{rng.randint(0, 999):03d}", f".{rng.randint(0, 999999):06d}"])
    return f"05-{1 + i // 8640 % 28:02d} {i // 360 % 24:02d}:{i // 6 % 60:02d}:{i * 10 % 60:02d}{frac}"


def spec_line(rng: random.Random, ts: str, proc: str, form: int, k: int) -> str:
    acc, drafted = rng.randint(0, 900), rng.randint(1, 999) * k
    # at most accepted / drafts in all (the printed length less its bonus token), as vLLM >= 0.9
    # prints them: a length equal to their sum is vLLM < 0.9's, left to the line parser
    pp = ", ".join(f"{rng.random() * acc / 100 / k:.3f}" for _ in range(k))
    rate = f"{100 * acc / drafted:.1f}%"
    head = f"{proc} INFO {ts} [metrics.py:101] SpecDecoding metrics: "
    if form == 3:  # PR #16665
        return (
            head + f"Draft acceptance rate: {rate}, Mean acceptance length: {1 + acc / 100:.2f}, "
            f"Accepted: {acc} tokens, Drafted: {drafted} tokens, Per-position acceptance rate: {pp}"
        )
    return (
        head + f"Mean acceptance length: {1 + acc / 100:.2f}, Accepted throughput: {acc / 10:.2f} tokens/s, "
        f"Drafted throughput: {drafted / 10:.2f} tokens/s, Accepted: {acc} tokens, Drafted: {drafted} tokens, "
        f"Per-position acceptance rate: {pp}, Avg Draft acceptance rate: {rate}"
    )


def engine_line(rng: random.Random, ts: str, proc: str, engine: int) -> str:
    later = rng.random() < 0.3  # the conditional parts of later versions
    return (
        f"{proc} INFO {ts} [loggers.py:271] Engine {engine:03d}: Avg prompt throughput: {rng.uniform(0, 99):.1f} "
        f"tokens/s, Avg generation throughput: {rng.uniform(0, 3000):.1f} tokens/s, Running: {rng.randint(0, 64)} "
        f"reqs, Waiting: {rng.randint(0, 9)} reqs, "
        + (f"Deferred: {rng.randint(0, 3)} reqs, Preemptions: {rng.randint(0, 3)}, " if later else "")
        + f"GPU KV cache usage: {rng.uniform(0, 100):.1f}%, Prefix cache hit rate: {rng.uniform(0, 100):.1f}%"
        + (f", External prefix cache hit rate: {rng.uniform(0, 100):.1f}%" if later else "")
    )


def vllm_log(seed: int, n: int, proc: str = PROC, engines: int = 1, odd: list[str] | None = None) -> bytes:
    rng = random.Random(seed)
    k = rng.randint(1, 6)
    out = [f"{proc} INFO 05-01 00:00:00 [api_server.py:1] vLLM API server version 0.11.0"]
    for i in range(n):
        ts = stamp(rng, i)
        r = rng.random()
        if odd and i % 997 == 500:
            out.append(rng.choice(odd).replace("TS", ts))
        elif r < 0.3:
            out.append(engine_line(rng, ts, proc, rng.randrange(engines)))
            if rng.random() < 0.9:
                out.append(spec_line(rng, ts, proc, rng.choice([3, 4, 4]), k))
        elif r < 0.35:
            out.append(spec_line(rng, ts, proc, 4, k))  # no engine line before it
        else:
            out.append(
                f'{proc} INFO:     10.0.0.{rng.randint(1, 254)}:5000 - "POST /v1/completions HTTP/1.1" 200 OK'
            )
    return ("\n".join(out) + "\n").encode()


ODD_VLLM = [
    f"{PROC} INFO TS [utils.py:1] non-default args: {{}}",
    f"{PROC} INFO TS [api_server.py:1] vLLM API server version 0.12.0",
    f"\x1b[1;36m{PROC}\x1b[0m INFO TS [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg "
    "generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%",
    f"{PROC} INFO TS [metrics.py:1] SpecDecoding metrics: Mean acceptance length: nan, Accepted: 0 tokens, "
    "Drafted: 0 tokens, Per-position acceptance rate: nan, Avg Draft acceptance rate: nan%",
    "(Worker pid=3) INFO TS [metrics.py:1] SpecDecoding metrics: Mean acceptance length: 2.00, Accepted: 1 tokens, "
    "Drafted: 2 tokens, Per-position acceptance rate: 0.500, Avg Draft acceptance rate: 50.0%",
]


def llama_log(seed: int, n: int) -> bytes:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        t = f"{i // 600}.{i // 10 % 60:02d}.{rng.randint(0, 999):03d}.{rng.randint(0, 999):03d}"
        if rng.random() < 0.2:
            acc, gen = rng.randint(0, 300), rng.randint(300, 600)
            line = f"{t} I slot print_timing: id {rng.randint(0, 9):2d} | task {i} | draft acceptance"
            if rng.random() < 0.3:  # the old form
                line += f" rate = {acc / gen:.5f} ({acc:5d} accepted / {gen:5d} generated)"
            else:
                pp = ", ".join(f"{rng.random():.3f}" for _ in range(rng.randint(1, 4)))
                line += (
                    f" = {acc / gen:.5f} ({acc:5d} accepted / {gen:5d} generated), "
                    f"mean acceptance length = {1 + acc / 100:5.2f}, acceptance rate per position = ({pp})"
                )
        else:
            line = f"{t} I srv  update_slots: all slots are idle"
        out.append(line)
    return ("\n".join(out) + "\n").encode()


def vllm_line(i: int, al: float, drafts: int, k: int | None = 3, pid: int = 1) -> str:
    """A vLLM V1 spec line for ``drafts`` drafts at mean acceptance length ``al``."""
    accepted = round((al - 1) * drafts)
    drafted = drafts * (k or 3)
    pp = f"Per-position acceptance rate: {', '.join(['0.500'] * k)}, " if k else ""
    return (
        f"(APIServer pid={pid}) INFO 05-19 10:{i // 60 % 60:02d}:{i % 60:02d} [metrics.py:101] SpecDecoding "
        f"metrics: Mean acceptance length: {1 + accepted / drafts:.2f}, Accepted throughput: 1.00 tokens/s, "
        f"Drafted throughput: 1.00 tokens/s, Accepted: {accepted} tokens, Drafted: {drafted} tokens, "
        f"{pp}Avg Draft acceptance rate: {100 * accepted / drafted:.1f}%\n"
    )


LINE = (
    "(APIServer pid=4321) INFO 11-20 11:02:{s:02d} [metrics.py:101] SpecDecoding metrics: Mean acceptance "
    "length: 2.85, Accepted throughput: 195.10 tokens/s, Drafted throughput: 316.80 tokens/s, Accepted: 1951 "
    "tokens, Drafted: 3168 tokens, Per-position acceptance rate: 0.847, 0.573, 0.428, Avg Draft acceptance "
    "rate: 61.6%\n"
)


MTIME_2024 = calendar.timegm((2024, 11, 21, 0, 0, 0, 0, 0, 0))


def old_log(tmp_path: Path) -> Path:
    log = tmp_path / "vllm-2024.log"
    log.write_text("".join(LINE.format(s=s) for s in range(10, 40, 10)))
    os.utime(log, (MTIME_2024, MTIME_2024))
    return log
