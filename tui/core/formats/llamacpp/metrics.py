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
from tui.core.sources.prom.counters import (
    CounterReader,
    Counters,
    Steps,
    counter_name,
    delta,
    group,
    group_key,
    pos,
)

NAMES = {
    "llamacpp:spec_decode_num_drafts_total": "drafts",
    "llamacpp:spec_decode_num_draft_tokens_total": "draft_tokens",
    "llamacpp:spec_decode_num_accepted_tokens_total": "accepted",
    "llamacpp:tokens_predicted_total": "gen_tokens",
}
POS = "llamacpp:spec_decode_num_accepted_tokens_per_pos_total"
RUNNING = "llamacpp:requests_processing"
PREFIX = "llamacpp:"


class LlamaCppMetrics(CounterReader, MetricsReader):
    found_text = "llama.cpp spec-decode counters"

    def collect(self, samples: list[tuple[str, dict, float, str]]) -> dict[tuple, Counters]:
        groups: dict[tuple, Counters] = {}
        running: dict[tuple, float] = {}
        for name, labels, value, _ in samples:
            if not name.startswith(PREFIX):
                continue
            cname = counter_name(name)
            if cname in NAMES:
                group(groups, self.family, labels).values[NAMES[cname]] = value
            elif cname == POS and (i := pos(labels, "position")) is not None:
                group(groups, self.family, labels).acc_pos[i] = value
            elif name == RUNNING:
                running[group_key(labels)] = value
        for k, c in groups.items():
            c.running = running.get(k)
        return {k: c for k, c in groups.items() if "drafts" in c.values and "accepted" in c.values}

    def steps(
        self, key: tuple, c: Counters, base: Counters | None, k: int | None, extra: dict
    ) -> Steps | None:
        bv = base.values if base is not None else None
        steps = delta(c.values, bv, "drafts")
        if not steps or steps <= 0:
            return None  # no verify step in the window: idle
        return steps, steps, delta(c.values, bv, "accepted"), delta(c.values, bv, "draft_tokens")
