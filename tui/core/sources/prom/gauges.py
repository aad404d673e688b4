"""SGLang and vLLM V0 spec-decode gauges → records (see :mod:`tui.core.sources.prom.exposition`)."""

from __future__ import annotations

from tui.core.model.records import RATE_VLLM_V0_CUMULATIVE
from tui.core.sources.prom.vllm import finite, prefix

SGL_AL, SGL_RATE, SGL_TPUT = "sglang:spec_accept_length", "sglang:spec_accept_rate", "sglang:gen_throughput"
# no running requests for SGLang: sglang:num_running_reqs is also set at prefill log lines, so at a
# scrape it need not be the batch size of the decode interval the spec gauges hold
SGL_STEPS, SGL_NDT = "sglang:spec_num_steps", "sglang:spec_num_draft_tokens"
SGL_NAMES = (SGL_AL, SGL_RATE, SGL_TPUT, SGL_STEPS, SGL_NDT)
V0_RATE, V0_EFF = "vllm:spec_decode_draft_acceptance_rate", "vllm:spec_decode_efficiency"


def sglang_rank(labels: dict) -> str:
    parts = [f"DP{labels['dp_rank']}"] if labels.get("dp_rank") not in (None, "") else []
    parts.append(f"TP{labels.get('tp_rank', '0')}")
    if labels.get("pp_rank") not in (None, "", "0"):
        parts.append(f"PP{labels['pp_rank']}")
    return prefix(labels) + " ".join(parts)


def agreed(values) -> int | None:
    """The one positive integer all ranks report (None when absent, 0 or not agreed)."""
    got = {int(v) for v in values if finite(v) and v > 0 and float(v).is_integer()}
    return got.pop() if len(got) == 1 else None


def sglang_record(g: dict, ts: float) -> dict | None:
    al = g.get(SGL_AL)
    if not finite(al) or al <= 0:  # type: ignore[operator]
        return None  # 0: no decode yet, or speculative decoding off
    rec: dict = {
        "family": "sglang",
        "timestamp": ts,
        "rank": sglang_rank(g["labels"]),
        "accept_len": al,
        "extra": {"source": "metrics"},
    }
    if finite(g.get(SGL_RATE)):
        rec["accept_rate"] = g[SGL_RATE]
    if finite(g.get(SGL_TPUT)):
        rec["throughput"] = g[SGL_TPUT]
    for name, what in ((SGL_STEPS, "num_steps"), (SGL_NDT, "num_draft_tokens")):
        if finite(g.get(name)) and g[name] > 0:
            rec["extra"][what] = f"{g[name]:g}"
    return rec


def v0_record(g: dict, ts: float) -> dict | None:
    rate = g.get(V0_RATE)
    if not finite(rate):
        return None
    extra = {"source": "metrics"}
    if finite(g.get(V0_EFF)):
        extra["system_efficiency"] = repr(g[V0_EFF])
    return {
        "family": "vllm",
        "timestamp": ts,
        "rank": g["labels"].get("instance") or None,
        "accept_rate": rate,
        "cumulative": True,
        "rate_definition": RATE_VLLM_V0_CUMULATIVE,
        "extra": extra,
    }
