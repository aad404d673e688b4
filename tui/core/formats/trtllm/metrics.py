"""TensorRT-LLM's ``/metrics`` (``trtllm-serve``, ``GET /prometheus/metrics``) → window records
(docs/formats-metrics.md; the converter is :class:`tui.core.sources.prom.exposition.Converter`).

The iteration counters ``trtllm_spec_decode_num_draft_tokens_total`` /
``_num_accepted_tokens_total`` give the rate (Δaccepted/Δdraft_tokens) but not the number of
verify steps. The steps come either from the per-position counters
``trtllm_spec_decode_drafted_tokens_total{token_position}`` (position 0 is drafted once per step
of each request: num_drafts = Δdrafted_pos_0, accepted = Σ Δaccepted_pos_i, drafted =
Σ Δdrafted_pos_i) or, without them, from the iteration counters and k = ``spec_num_tokens`` of
``trtllm_speculative_config_info`` (num_drafts = Δdraft_tokens / k, used only when
Δdraft_tokens is a multiple of k). The two populations differ (per-position counters move when
a request finishes, iteration counters at every iteration), so one method is chosen at the first
window of a run and kept until the next restart: mixing them would count the same tokens twice.
Without either, a window gives the rate only. The ``trtllm_spec_decode_acceptance_length``
gauge (the last iteration only) is not used.
"""

from __future__ import annotations

from tui.core.formats.plugin import MetricsReader
from tui.core.sources.prom import counters as pc

NAMES = {
    "trtllm_spec_decode_num_draft_tokens_total": "draft_tokens",
    "trtllm_spec_decode_num_accepted_tokens_total": "accepted",
    "trtllm_generation_tokens_total": "gen_tokens",
}
POS_DRAFTED = "trtllm_spec_decode_drafted_tokens_total"
POS_ACCEPTED = "trtllm_spec_decode_accepted_tokens_total"
INFO = "trtllm_speculative_config_info"
RUNNING = "trtllm_num_requests_running"
PREFIX = "trtllm_"
_INFO_LABELS = ("spec_enabled", "spec_method", "spec_num_tokens", "spec_draft_model")

# the methods a run's verify steps are counted with
PER_POSITION, ITERATION, RATE_ONLY = "per-position counters", "iteration counters / k", "rate only"


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


def trt_method(c: pc.Counters, base: pc.Counters | None, k: int | None) -> str | None:
    """The method a run will keep, decided at its first window that moved (None: idle)."""
    if c.drafted_pos:
        d0 = pc.delta(c.drafted_pos, base.drafted_pos if base else None, 0)
        if d0:
            return PER_POSITION
    d_tok = pc.delta(c.values, base.values if base else None, "draft_tokens")
    if not d_tok or d_tok <= 0:
        return None
    if c.drafted_pos:
        return None  # per-position series exist but did not move: wait for them
    return ITERATION if k else RATE_ONLY


class TrtLlmMetrics(pc.CounterReader, MetricsReader):
    found_text = "TensorRT-LLM spec-decode counters"

    def __init__(self, family: str) -> None:
        super().__init__(family)
        self._method: dict[tuple, str] = {}  # how each run counts verify steps
        self._info: tuple | None = None  # trtllm_speculative_config_info labels last seen
        self._info_now: dict | None = None

    prefix = PREFIX
    names = NAMES
    running_name = RUNNING

    def collect(self, samples: list[tuple[str, dict, float, str]]) -> dict[tuple, pc.Counters]:
        self._info_now = None
        return super().collect(samples)

    def other(
        self, groups: dict[tuple, pc.Counters], name: str, cname: str, labels: dict, value: float
    ) -> None:
        if cname in (POS_DRAFTED, POS_ACCEPTED):
            i = pc.pos(labels, "token_position")
            if i is not None:
                c = pc.group(groups, self.family, labels)
                (c.drafted_pos if cname == POS_DRAFTED else c.acc_pos)[i] = value
        elif name == INFO and value == 1.0:
            self._info_now = dict(labels)

    def usable(self, c: pc.Counters) -> bool:
        return "accepted" in c.values or bool(c.drafted_pos)

    def config(self, groups: dict[tuple, pc.Counters], scrape: pc.Scrape) -> tuple[dict, int | None, bool]:
        info = self._info_now
        config = trt_config(info, next(iter(groups.values())).labels)
        k = config.get("speculative_config", {}).get("num_speculative_tokens")
        sig = info_signature(info)
        changed = False
        if info is not None:
            # new config labels: a restart with another config (the gauge is set once at start)
            changed = self._info is not None and sig != self._info
            self._info = sig
        return config, k, changed

    def window(
        self, g: tuple, c: pc.Counters, base: pc.Counters | None, dt: float | None, ts: float, k: int | None
    ) -> dict | None:
        if base is None:
            self._method.pop(g, None)
        method = self._method.get(g) or trt_method(c, base, k)
        if method is None:
            return None  # idle
        self._method[g] = method
        return super().window(g, c, base, dt, ts, k)

    def steps(
        self, key: tuple, c: pc.Counters, base: pc.Counters | None, k: int | None, extra: dict
    ) -> pc.Steps | None:
        method = self._method.get(key)
        bv = base.values if base is not None else None
        bd = base.drafted_pos if base is not None else None
        d_acc, d_tok = pc.delta(c.values, bv, "accepted"), pc.delta(c.values, bv, "draft_tokens")
        accepted, drafted = d_acc, d_tok
        # position 0 is drafted once per verify step of each finished request
        pos_steps = pc.delta(c.drafted_pos, bd, 0) if c.drafted_pos else None
        steps = None
        extra["steps_from"] = method or RATE_ONLY
        if method == PER_POSITION:
            if not pos_steps or pos_steps <= 0:
                return None
            ba = base.acc_pos if base is not None else None
            pos_acc = [pc.delta(c.acc_pos, ba, i) or 0.0 for i in set(c.acc_pos) | set(c.drafted_pos)]
            steps, accepted = pos_steps, sum(pos_acc)
            drafted = sum(pc.delta(c.drafted_pos, bd, i) or 0.0 for i in c.drafted_pos)
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
            if pos_steps:
                extra["per_position_from"] = PER_POSITION  # another population than the rate's
        return steps, pos_steps, accepted, drafted

    def lifetime_drafts(
        self, c: pc.Counters, k: int | None
    ) -> tuple[float | None, float | None, float | None]:
        acc, dtok = c.values.get("accepted"), c.values.get("draft_tokens")
        if c.drafted_pos.get(0):
            return c.drafted_pos[0], sum(c.acc_pos.values()), sum(c.drafted_pos.values())
        return (dtok / k if (dtok and k) else None), acc, dtok
