"""The TensorRT-LLM plug-in (see :mod:`tui.core.formats.plugin`): ``/metrics`` only."""

from __future__ import annotations

from tui.core.formats.fleet_names import FleetNames, Series
from tui.core.formats.plugin import MetricsReader, PrintedRate


class TrtLlm(PrintedRate):
    def metrics(self) -> MetricsReader:
        from tui.core.formats.trtllm.metrics import TrtLlmMetrics  # only a /metrics source needs it

        return TrtLlmMetrics(self.name)

    def fleet(self) -> FleetNames:
        # the per-position counters, one population (they move when a request finishes): position
        # 0 is drafted once per verify step, so its count is the drafts; the iteration counters
        # count another population and are not mixed in (see metrics.py)
        return FleetNames(
            self.name,
            "counters",
            accepted=Series("trtllm_spec_decode_accepted_tokens_total"),
            drafts=Series("trtllm_spec_decode_drafted_tokens_total", 'token_position="0"'),
            draft_tokens=Series("trtllm_spec_decode_drafted_tokens_total"),
            gen_tokens=Series("trtllm_generation_tokens_total"),
            running=Series("trtllm_num_requests_running"),
        )
