"""llama.cpp (``llama-server``): per-request ``draft acceptance`` lines (``timing``), the
``statistics`` counter lines (``stats``), its ``/metrics`` counters (``metrics``); the plug-in is
:class:`tui.core.formats.llamacpp.plugin.LlamaCpp`. Nothing is imported here."""
