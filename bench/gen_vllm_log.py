"""A deterministic vLLM V1 server log for the summary benchmark.

    python bench/gen_vllm_log.py --lines 3000000 --out bench/out/vllm_3000000.log [--seed 1]

Two startup lines (``vLLM API server version``, ``non-default args``), then groups of ten lines
as a busy V1 server prints them every stats interval: one ``Engine 000:`` stats line, the
``SpecDecoding metrics:`` line that follows it (k = 3, per-position rates, percent rate), and eight
uvicorn access lines. Values are drawn from a seeded generator, so the same arguments always give
the same bytes. ``--forked``: per-position rates that never add up to the printed mean (drawn
on their own, as a patched server might print them): about one line in a hundred then shows, by
chance, the sum of an older release's lines, which must change neither the mean nor the speed.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

K = 3
PROC = "(APIServer pid=3617069)"


def spec_line(rng: random.Random, stamp: str, forked: bool = False) -> str:
    drafts = rng.randint(200, 900)
    per_pos = []
    p = rng.uniform(0.6, 0.9)
    accepted_at = []
    for _ in range(K):
        a = sum(1 for _ in range(8) if rng.random() < p) * drafts // 8  # cheap binomial-ish
        a = min(a, accepted_at[-1] if accepted_at else drafts)
        accepted_at.append(a)
        per_pos.append(f"{a / drafts:.3f}")
        p *= 0.8
    accepted = sum(accepted_at)
    drafted = drafts * K
    if forked:
        per_pos = [f"{rng.random():.3f}" for _ in range(K)]
    secs = 10.0
    return (
        f"{PROC} INFO {stamp} [metrics.py:101] SpecDecoding metrics: Mean acceptance length: "
        f"{1 + accepted / drafts:.2f}, Accepted throughput: {accepted / secs:.2f} tokens/s, "
        f"Drafted throughput: {drafted / secs:.2f} tokens/s, Accepted: {accepted} tokens, "
        f"Drafted: {drafted} tokens, Per-position acceptance rate: {', '.join(per_pos)}, "
        f"Avg Draft acceptance rate: {100 * accepted / drafted:.1f}%\n"
    )


def engine_line(rng: random.Random, stamp: str) -> str:
    return (
        f"{PROC} INFO {stamp} [loggers.py:271] Engine 000: Avg prompt throughput: "
        f"{rng.uniform(0, 5000):.1f} tokens/s, Avg generation throughput: {rng.uniform(50, 3000):.1f} tokens/s, "
        f"Running: {rng.randint(1, 64)} reqs, Waiting: {rng.randint(0, 9)} reqs, "
        f"GPU KV cache usage: {rng.uniform(0, 100):.1f}%, Prefix cache hit rate: {rng.uniform(0, 100):.1f}%\n"
    )


def access_line(rng: random.Random) -> str:
    return (
        f"{PROC} INFO:     10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}:"
        f'{rng.randint(1024, 65535)} - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
    )


def write(path: Path, lines: int, seed: int = 1, forked: bool = False) -> None:
    rng = random.Random(seed)
    t = 5 * 86400 + 8 * 3600  # 05-06 08:00:00 (no year: vLLM prints none)
    with open(path, "w") as f:
        f.write(f"{PROC} INFO 05-06 07:59:00 [api_server.py:1287] vLLM API server version 0.11.0\n")
        f.write(
            f"{PROC} INFO 05-06 07:59:01 [utils.py:233] non-default args: {{'model': 'meta-llama/Llama-3.1-8B', "
            f"'speculative_config': {{'method': 'eagle3', 'num_speculative_tokens': {K}}}}}\n"
        )
        buf = []
        for _ in range(lines // 10):
            t += 10
            day, rem = divmod(t, 86400)
            stamp = f"05-{1 + day % 28:02d} {rem // 3600:02d}:{rem // 60 % 60:02d}:{rem % 60:02d}"
            buf.append(engine_line(rng, stamp))
            buf.append(spec_line(rng, stamp, forked))
            buf.extend(access_line(rng) for _ in range(8))
            if len(buf) >= 100_000:
                f.write("".join(buf))
                buf.clear()
        f.write("".join(buf))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--lines", type=int, default=3_000_000, help="lines after the 2 startup lines (a multiple of 10)"
    )
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--forked", action="store_true", help="per-position rates that never add up")
    args = ap.parse_args(argv)
    write(args.out, args.lines, args.seed, args.forked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
