"""The TensorRT-LLM plug-in (see :mod:`tui.core.formats.plugin`): ``/metrics`` only."""

from __future__ import annotations

from typing import ClassVar

from tui.core.formats.plugin import MetricsReader, PrintedRate


class TrtLlm(PrintedRate):
    name = "trtllm"
    display = "TensorRT-LLM"
    metric_prefixes: ClassVar[tuple[str, ...]] = ("trtllm_",)
    no_spec_note = (
        "TensorRT-LLM metrics without spec-decode counters: speculative decoding off, or "
        "enable_iter_perf_stats / return_perf_metrics not set"
    )
    looked_for = "trtllm_spec_decode_num_accepted_tokens_total"

    def metrics(self) -> MetricsReader:
        from tui.core.formats.trtllm.metrics import TrtLlmMetrics  # only a /metrics source needs it

        return TrtLlmMetrics(self.name)
