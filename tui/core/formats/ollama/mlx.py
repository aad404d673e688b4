"""Ollama's MLX engine: ``msg="speculative decode stats"``, one line per request (docs/formats.md,
"Ollama"). Its GGUF engine runs llama-server, whose lines it passes through (read as llama.cpp).

``time=... level=INFO source=speculate_stats.go:62 msg="speculative decode stats" iterations=140
drafted=392 accepted=281 acceptance=0.72 avg_draft=2.80 max_draft=5 avg_accepted=2.01
depth_over_time="1.6/3 2.6/4 ..."``. A round emits accepted + 1 tokens, so the request's accept
length is ``1 + accepted / iterations`` (from the unrounded counts; it includes the rounds that
drafted nothing). A line with ``drafted=0`` has no acceptance.
"""

from __future__ import annotations

import re

from tui.core.formats.ollama.grammar import MLX
from tui.core.model.records import RATE_DRAFTS, Record

ANCHOR = MLX

_KV = re.compile(r" (iterations|drafted|accepted|acceptance|max_draft)=(\d+(?:\.\d+)?)(?= |$)")


def parse_mlx(source: str, line_no: int, offset: int, text: str, at: int, raw: str) -> Record | None:
    kv = dict(_KV.findall(text, at))
    try:
        it, dr, acc = int(kv["iterations"]), int(kv["drafted"]), int(kv["accepted"])
    except (KeyError, ValueError):
        return None
    if dr <= 0 or it <= 0:
        return None
    rec = Record(source, line_no, offset, "ollama", "request", raw)
    rec.accepted, rec.drafted, rec.num_drafts = acc, dr, float(it)
    rec.accept_len_derived = 1.0 + acc / it
    rec.accept_rate_derived = acc / dr
    if "acceptance" in kv:
        rec.accept_rate = float(kv["acceptance"])  # printed %.2f
        rec.rate_definition = RATE_DRAFTS
    return rec
