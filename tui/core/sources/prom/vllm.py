"""vLLM V1 spec-decode counters → window records (see :mod:`tui.core.sources.prom.exposition`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tui.core.model.records import RATE_DRAFTS

V1 = {
    "vllm:spec_decode_num_drafts_total": "drafts",
    "vllm:spec_decode_num_draft_tokens_total": "draft_tokens",
    "vllm:spec_decode_num_accepted_tokens_total": "accepted",
    "vllm:generation_tokens_total": "gen_tokens",
}
V1_POS = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
V1_CREATED = "vllm:spec_decode_num_drafts_created"
RUNNING = "vllm:num_requests_running"


def finite(v: float | None) -> bool:
    return v is not None and math.isfinite(v)


def prefix(labels: dict) -> str:
    inst = labels.get("instance")
    return f"{inst} " if inst else ""


def vllm_rank(labels: dict) -> str | None:
    engine = labels.get("engine")
    return f"{prefix(labels)}engine {engine}" if engine is not None else (labels.get("instance") or None)


@dataclass(slots=True)
class Engine:
    labels: dict
    values: dict[str, float] = field(default_factory=dict)  # drafts, draft_tokens, accepted, gen_tokens
    pos: dict[int, float] = field(default_factory=dict)
    created: float | None = None
    running: float | None = None


def engine_order(labels: dict) -> tuple:
    e = labels.get("engine", "")
    return (labels.get("instance", ""), int(e) if e.isdigit() else 0, e)


def lifetime(e: Engine) -> dict:
    drafts, dtok, acc = (
        e.values.get("drafts", 0.0),
        e.values.get("draft_tokens"),
        e.values.get("accepted", 0.0),
    )
    out = {
        "drafts": int(round(drafts)),
        "draft_tokens": None if dtok is None else int(round(dtok)),
        "accepted": int(round(acc)),
        "accept_len": 1.0 + acc / drafts if drafts > 0 else None,
        "accept_rate": acc / dtok if dtok else None,
        "per_position": [e.pos[i] / drafts for i in sorted(e.pos)] if drafts > 0 and e.pos else None,
        "since": e.created,
    }
    return out


def window(e: Engine, base: Engine | None, dt: float | None, ts: float) -> dict | None:
    """The record of one engine's window (``base`` None: the counters count from zero)."""

    def delta(name: str) -> float | None:
        cur = e.values.get(name)
        if cur is None:
            return None
        if base is None:
            return cur
        old = base.values.get(name)
        return None if old is None else cur - old

    d_drafts, d_acc, d_tok = delta("drafts"), delta("accepted"), delta("draft_tokens")
    if not d_drafts or d_drafts <= 0 or d_acc is None:
        return None  # no draft in the window: idle
    rec: dict = {
        "family": "vllm",
        "timestamp": ts,
        "rank": vllm_rank(e.labels),
        "accept_len": 1.0 + d_acc / d_drafts,
        "accepted": int(round(d_acc)),
        "num_drafts": float(round(d_drafts)),
        "rate_definition": RATE_DRAFTS,
    }
    if d_tok is not None and d_tok > 0:
        rec["accept_rate"] = d_acc / d_tok
        rec["drafted"] = int(round(d_tok))
    if e.pos and (base is None or set(base.pos) >= set(e.pos)):
        rec["per_position"] = [
            (e.pos[i] - (base.pos[i] if base is not None else 0.0)) / d_drafts for i in sorted(e.pos)
        ]
    d_gen = delta("gen_tokens")
    window = dt if base is not None else None
    if d_gen is not None and window and window > 0:
        rec["throughput"] = d_gen / window
    if finite(e.running):
        rec["running_req"] = int(e.running)  # type: ignore[arg-type]
    extra = {"source": "metrics"}
    if window:
        extra["window_s"] = f"{window:.3f}"
    if base is None:
        extra["window"] = "since restart"
    rec["extra"] = extra
    return rec
