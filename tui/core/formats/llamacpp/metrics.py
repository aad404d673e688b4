"""llama.cpp's ``/metrics`` (``llama-server --metrics``, PR #26389) → window records
(docs/formats-metrics.md; the converter is :class:`tui.core.sources.prom.exposition.Converter`).

Cumulative counters ``llamacpp:spec_decode_num_drafts_total`` (verify steps),
``_num_draft_tokens_total``, ``_num_accepted_tokens_total`` and
``_num_accepted_tokens_per_pos_total{position}``: accept len = 1 + Δaccepted/Δdrafts, accept
rate = Δaccepted/Δdraft_tokens, per position i = Δaccepted_pos_i/Δdrafts. Running requests =
``llamacpp:requests_processing``; throughput = Δ``llamacpp:tokens_predicted_total`` / seconds.
"""

from __future__ import annotations

from tui.core.formats.plugin import MetricsReader
from tui.core.sources.prom import counters as pc

NAMES = {
    "llamacpp:spec_decode_num_drafts_total": "drafts",
    "llamacpp:spec_decode_num_draft_tokens_total": "draft_tokens",
    "llamacpp:spec_decode_num_accepted_tokens_total": "accepted",
    "llamacpp:tokens_predicted_total": "gen_tokens",
}
POS = "llamacpp:spec_decode_num_accepted_tokens_per_pos_total"
RUNNING = "llamacpp:requests_processing"
PREFIX = "llamacpp:"


class LlamaCppMetrics(pc.CounterReader, MetricsReader):
    found_text = "llama.cpp spec-decode counters"

    prefix = PREFIX
    names = NAMES
    running_name = RUNNING

    def other(
        self, groups: dict[tuple, pc.Counters], name: str, cname: str, labels: dict, value: float
    ) -> None:
        if cname == POS and (i := pc.pos(labels, "position")) is not None:
            pc.group(groups, self.family, labels).acc_pos[i] = value

    def usable(self, c: pc.Counters) -> bool:
        return "drafts" in c.values and "accepted" in c.values

    def steps(
        self, key: tuple, c: pc.Counters, base: pc.Counters | None, k: int | None, extra: dict
    ) -> pc.Steps | None:
        bv = base.values if base is not None else None
        steps = pc.delta(c.values, bv, "drafts")
        if not steps or steps <= 0:
            return None  # no verify step in the window: idle
        return steps, steps, pc.delta(c.values, bv, "accepted"), pc.delta(c.values, bv, "draft_tokens")
