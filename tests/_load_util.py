"""Generated sglang logs whose acceptance falls with the batch size (the load-adjusted A/B tests)."""

from __future__ import annotations

import math
import random
from pathlib import Path

ARGS = (
    "[2026-11-20 12:00:00] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', "
    "speculative_draft_model_path='d', speculative_num_steps=3, speculative_eagle_topk=1, "
    "speculative_num_draft_tokens=4)\n"
)


def curve(b: int, shift: float = 0.0) -> float:
    """Acceptance falling with the batch size (the same for both servers unless shifted)."""
    return 1.5 + 1.5 / math.sqrt(b) + shift


def decode(i: int, run: int, al: float | None, tput: float) -> str:
    acc = f"accept len: {al:.2f}, accept rate: {(al - 1) / 3:.2f}, " if al is not None else ""
    return (
        f"[2026-11-20 12:{i // 3600 % 60:02d}:{i % 60:02d}] Decode batch, #running-req: {run}, #token: 900, "
        f"token usage: 0.10, {acc}cuda graph: True, gen throughput (token/s): {tput:.2f}, #queue-req: 0\n"
    )


def write_log(path: Path, batches: list[int], shift: float, seed: int) -> Path:
    rng = random.Random(seed)
    lines = [ARGS]
    for i, b in enumerate(batches):
        al = min(4.0, max(1.0, curve(b, shift) + rng.gauss(0.0, 0.15)))
        lines.append(decode(i, b, al, 100.0 * b * al))
    path.write_text("".join(lines))
    return path


def mostly(rng: random.Random, lo: int, hi: int, n: int, overlap: float = 0.25) -> list[int]:
    """``n`` batch sizes: most in [lo, hi], a share spread over 1–60 (the common strata)."""
    return [rng.randint(1, 60) if rng.random() < overlap else rng.randint(lo, hi) for _ in range(n)]


def throughput_log(path: Path, al: float | None, mean: float, seed: int) -> Path:
    rng = random.Random(seed)
    path.write_text(
        ("" if al is None else ARGS)
        + "".join(decode(i, 8, al, max(1.0, rng.gauss(mean, 50.0))) for i in range(400))
    )
    return path
