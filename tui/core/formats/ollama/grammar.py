"""Ollama's part of the one grammar (:mod:`tui.core.formats.grammar`): its MLX engine's anchor."""

from __future__ import annotations

MLX = 'msg="speculative decode stats"'  # one line per request
