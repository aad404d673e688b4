"""Ollama: its MLX engine's per-request ``speculative decode stats`` lines (``mlx``); its GGUF
engine runs llama-server, whose lines are read as llama.cpp. The plug-in is
:class:`tui.core.formats.ollama.plugin.Ollama`. Nothing is imported here."""
