"""vLLM: ``SpecDecoding metrics`` / ``Speculative metrics`` and ``Engine NNN`` lines (``spec``),
``vllm bench serve`` blocks (``bench``), startup markers, its ``/metrics`` counters and V0 gauges
(``metrics``); the plug-in is :class:`tui.core.formats.vllm.plugin.Vllm`. Nothing is imported here."""
