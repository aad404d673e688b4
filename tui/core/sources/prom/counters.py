"""TensorRT-LLM and llama.cpp spec-decode counters → window records (used by
:class:`tui.core.sources.prom.exposition.Converter`; no I/O). The formats and their upstream sources
are in docs/formats-new.md §3.4 and §5.

Both servers expose cumulative counters; a record is the difference between two scrapes, with the
pooled-estimator counts of the window (``accepted``, ``drafted``, ``num_drafts``):

* **llama.cpp** (``llama-server --metrics``, PR #26389): ``llamacpp:spec_decode_num_drafts_total``
  (verify steps), ``_num_draft_tokens_total``, ``_num_accepted_tokens_total`` and
  ``_num_accepted_tokens_per_pos_total{position}``. accept len = 1 + Δaccepted/Δdrafts, accept
  rate = Δaccepted/Δdraft_tokens, per position i = Δaccepted_pos_i/Δdrafts. Running requests =
  ``llamacpp:requests_processing``; throughput = Δ``llamacpp:tokens_predicted_total`` / seconds.
* **TensorRT-LLM** (``trtllm-serve``, ``GET /prometheus/metrics``): the iteration counters
  ``trtllm_spec_decode_num_draft_tokens_total`` / ``_num_accepted_tokens_total`` give the rate
  (Δaccepted/Δdraft_tokens) but not the number of verify steps. The steps come either from the
  per-position counters ``trtllm_spec_decode_drafted_tokens_total{token_position}`` (position 0
  is drafted once per step of each request: num_drafts = Δdrafted_pos_0, accepted =
  Σ Δaccepted_pos_i, drafted = Σ Δdrafted_pos_i) or, without them, from the iteration counters
  and k = ``spec_num_tokens`` of ``trtllm_speculative_config_info`` (num_drafts =
  Δdraft_tokens / k, used only when Δdraft_tokens is a multiple of k). The two populations differ
  (per-position counters move when a request finishes, iteration counters at every iteration),
  so one method is chosen at the first window of a run and kept until the next restart: mixing
  them would count the same tokens twice. Without either, a window gives the rate only.
  The ``trtllm_spec_decode_acceptance_length`` gauge (the last iteration only) is not used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tui.core.model.records import RATE_DRAFTS

LLAMACPP = {
    "llamacpp:spec_decode_num_drafts_total": "drafts",
    "llamacpp:spec_decode_num_draft_tokens_total": "draft_tokens",
    "llamacpp:spec_decode_num_accepted_tokens_total": "accepted",
    "llamacpp:tokens_predicted_total": "gen_tokens",
}
LLAMACPP_POS = "llamacpp:spec_decode_num_accepted_tokens_per_pos_total"
LLAMACPP_RUNNING = "llamacpp:requests_processing"
TRT = {
    "trtllm_spec_decode_num_draft_tokens_total": "draft_tokens",
    "trtllm_spec_decode_num_accepted_tokens_total": "accepted",
    "trtllm_generation_tokens_total": "gen_tokens",
}
TRT_POS_DRAFTED = "trtllm_spec_decode_drafted_tokens_total"
TRT_POS_ACCEPTED = "trtllm_spec_decode_accepted_tokens_total"
TRT_INFO = "trtllm_speculative_config_info"
TRT_RUNNING = "trtllm_num_requests_running"
_POS_LABELS = ("position", "token_position", "instance", "job")
_INFO_LABELS = ("spec_enabled", "spec_method", "spec_num_tokens", "spec_draft_model")

# the methods a TensorRT-LLM run's verify steps are counted with
PER_POSITION, ITERATION, RATE_ONLY = "per-position counters", "iteration counters / k", "rate only"


@dataclass(slots=True)
class Counters:
    """One server's (or one label set's) counters at one scrape."""

    family: str
    labels: dict
    values: dict[str, float] = field(default_factory=dict)  # drafts, draft_tokens, accepted, gen_tokens
    acc_pos: dict[int, float] = field(default_factory=dict)
    drafted_pos: dict[int, float] = field(default_factory=dict)
    running: float | None = None

    def went_back(self, prev: Counters) -> bool:
        if any(self.values.get(n, math.inf) < v for n, v in prev.values.items()):
            return True
        for cur, old in ((self.acc_pos, prev.acc_pos), (self.drafted_pos, prev.drafted_pos)):
            if any(cur.get(i, -1.0) < v for i, v in old.items()):
                return True  # a per-position series never disappears, except at a restart
        return False


def _key(labels: dict) -> tuple:
    return tuple(sorted((k, v) for k, v in labels.items() if k not in _POS_LABELS))


def _pos(labels: dict, name: str) -> int | None:
    try:
        return int(labels.get(name, ""))
    except ValueError:
        return None


def counter_name(name: str) -> str:
    """prometheus-client names counter samples ``*_total``; text without a TYPE line may not."""
    return name if name.endswith(("_total", "_created", "_info")) else name + "_total"


def collect(samples) -> tuple[dict[tuple, Counters], dict[tuple, Counters], dict | None]:
    """(llama.cpp counters, TensorRT-LLM counters, the labels of trtllm_speculative_config_info)."""
    lcpp: dict[tuple, Counters] = {}
    trt: dict[tuple, Counters] = {}
    info: dict | None = None
    running: dict[tuple, float] = {}

    def group(groups: dict[tuple, Counters], family: str, labels: dict) -> Counters:
        key = _key(labels)
        c = groups.get(key)
        if c is None:
            c = groups[key] = Counters(family, {k: v for k, v in labels.items() if k not in _POS_LABELS[:2]})
        return c

    for name, labels, value, _ in samples:
        if name.startswith("llamacpp:"):
            cname = counter_name(name)
            if cname in LLAMACPP:
                group(lcpp, "llamacpp", labels).values[LLAMACPP[cname]] = value
            elif cname == LLAMACPP_POS and (i := _pos(labels, "position")) is not None:
                group(lcpp, "llamacpp", labels).acc_pos[i] = value
            elif name == LLAMACPP_RUNNING:
                running[("llamacpp",) + _key(labels)] = value
        elif name.startswith("trtllm_"):
            cname = counter_name(name)
            if cname in TRT:
                group(trt, "trtllm", labels).values[TRT[cname]] = value
            elif cname in (TRT_POS_DRAFTED, TRT_POS_ACCEPTED):
                i = _pos(labels, "token_position")
                if i is not None:
                    c = group(trt, "trtllm", labels)
                    (c.drafted_pos if cname == TRT_POS_DRAFTED else c.acc_pos)[i] = value
            elif name == TRT_INFO and value == 1.0:
                info = dict(labels)
            elif name == TRT_RUNNING:
                running[("trtllm",) + _key(labels)] = value
    for fam, groups in (("llamacpp", lcpp), ("trtllm", trt)):
        for key, c in groups.items():
            c.running = running.get((fam,) + key)
    lcpp = {k: c for k, c in lcpp.items() if "drafts" in c.values and "accepted" in c.values}
    trt = {k: c for k, c in trt.items() if "accepted" in c.values or c.drafted_pos}
    return lcpp, trt, info


def trt_config(info: dict | None, any_labels: dict) -> dict:
    """The segment config from ``trtllm_speculative_config_info`` (labels per collector.py)."""
    config: dict = {}
    model = (info or {}).get("model_name") or any_labels.get("model_name")
    if model:
        config["model"] = model
    if not info:
        return config
    sc: dict = {}
    if str(info.get("spec_enabled", "")).lower() in ("false", "0", "no"):
        sc["method"] = "none"
    elif info.get("spec_method"):
        sc["method"] = info["spec_method"]
    k = str(info.get("spec_num_tokens", "")).strip()
    if k.isdigit() and int(k) > 0:
        sc["num_speculative_tokens"] = int(k)
    if info.get("spec_draft_model"):
        sc["model"] = info["spec_draft_model"]
    if sc:
        config["speculative_config"] = sc
    return config


def info_signature(info: dict | None) -> tuple:
    return tuple((k, (info or {}).get(k)) for k in _INFO_LABELS)


def _delta(cur: dict, base: dict | None, name) -> float | None:
    v = cur.get(name)
    if v is None:
        return None
    if base is None:
        return v
    old = base.get(name)
    # a series that appears between two scrapes was created at 0 (collector.py and llama.cpp
    # create per-position series on their first increment)
    return v - (old if old is not None else 0.0)


def trt_method(c: Counters, base: Counters | None, k: int | None) -> str | None:
    """The method a TensorRT-LLM run will keep, decided at its first window that moved (None: idle)."""
    if c.drafted_pos:
        d0 = _delta(c.drafted_pos, base.drafted_pos if base else None, 0)
        if d0:
            return PER_POSITION
    d_tok = _delta(c.values, base.values if base else None, "draft_tokens")
    if not d_tok or d_tok <= 0:
        return None
    if c.drafted_pos:
        return None  # per-position series exist but did not move: wait for them
    return ITERATION if k else RATE_ONLY


def window(
    c: Counters,
    base: Counters | None,
    dt: float | None,
    ts: float,
    *,
    method: str | None = None,
    k: int | None = None,
) -> dict | None:
    """The record of one window (``base`` None: the counters count from zero, after a restart)."""
    bv = base.values if base is not None else None
    ba, bd = (base.acc_pos, base.drafted_pos) if base is not None else (None, None)
    d_acc, d_tok = _delta(c.values, bv, "accepted"), _delta(c.values, bv, "draft_tokens")
    extra: dict[str, str] = {"source": "metrics"}
    # TensorRT-LLM: a position drafted but never accepted has no accepted series; its rate is 0
    pos_acc = {i: _delta(c.acc_pos, ba, i) or 0.0 for i in set(c.acc_pos) | set(c.drafted_pos)}
    accepted, drafted = d_acc, d_tok
    if c.family == "llamacpp":
        steps = pos_steps = _delta(c.values, bv, "drafts")
        if not steps or steps <= 0:
            return None  # no verify step in the window: idle
    else:
        # position 0 is drafted once per verify step of each finished request
        pos_steps = _delta(c.drafted_pos, bd, 0) if c.drafted_pos else None
        steps = None
        extra["steps_from"] = method or RATE_ONLY
        if method == PER_POSITION:
            if not pos_steps or pos_steps <= 0:
                return None
            steps, accepted = pos_steps, sum(pos_acc.values())
            drafted = sum(_delta(c.drafted_pos, bd, i) or 0.0 for i in c.drafted_pos)
            if d_tok and d_tok > 0 and d_acc is not None:
                extra["iteration_accept_rate"] = f"{d_acc / d_tok:.6g}"
        else:
            if not d_tok or d_tok <= 0:
                return None
            if method == ITERATION and k:
                if abs(d_tok / k - round(d_tok / k)) < 1e-6:
                    steps = d_tok / k
                else:
                    extra["steps_unknown"] = f"{d_tok:g} draft tokens is not a multiple of k = {k}"
            if pos_acc and pos_steps:
                extra["per_position_from"] = PER_POSITION  # another population than the rate's
    if accepted is None:
        return None
    rec: dict = {"family": c.family, "timestamp": ts, "rank": c.labels.get("instance") or None}
    if steps:
        rec["accept_len"] = 1.0 + accepted / steps
        rec["num_drafts"] = float(round(steps))
    rec["accepted"] = int(round(accepted))
    if drafted is not None and drafted > 0:
        rec["accept_rate"] = accepted / drafted
        rec["drafted"] = int(round(drafted))
        if steps:
            extra["drafts_per_step"] = f"{drafted / steps:.4g}"
    rec["rate_definition"] = RATE_DRAFTS
    if pos_acc and pos_steps and pos_steps > 0:
        rec["per_position"] = [pos_acc[i] / pos_steps for i in sorted(pos_acc)]
    d_gen = _delta(c.values, bv, "gen_tokens")
    if d_gen is not None and base is not None and dt and dt > 0:
        rec["throughput"] = d_gen / dt
    if c.running is not None and math.isfinite(c.running):
        rec["running_req"] = int(c.running)
    if dt and base is not None:
        extra["window_s"] = f"{dt:.3f}"
    if base is None:
        extra["window"] = "since restart"
    rec["extra"] = extra
    return rec


def lifetime(c: Counters, k: int | None) -> dict:
    """Totals since the server started, as the vLLM lifetime entry (docs/formats-new.md §3.4, §5)."""
    acc, dtok = c.values.get("accepted"), c.values.get("draft_tokens")
    pos = c.acc_pos
    if c.family == "llamacpp":
        drafts = c.values.get("drafts")
    elif c.drafted_pos.get(0):
        drafts, acc, dtok = c.drafted_pos[0], sum(pos.values()), sum(c.drafted_pos.values())
    else:
        drafts = dtok / k if (dtok and k) else None
    return {
        "drafts": None if drafts is None else int(round(drafts)),
        "draft_tokens": None if dtok is None else int(round(dtok)),
        "accepted": None if acc is None else int(round(acc)),
        "accept_len": 1.0 + acc / drafts if (drafts and acc is not None) else None,
        "accept_rate": acc / dtok if (dtok and acc is not None) else None,
        "per_position": [pos[i] / drafts for i in sorted(pos)] if drafts and pos else None,
        "since": None,
    }
