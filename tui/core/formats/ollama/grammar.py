"""Ollama's part of the one grammar (:mod:`tui.core.formats.grammar`), read from its data
(``family.toml``): its MLX engine's anchor."""

from __future__ import annotations

from tui.core.formats.families import data

MLX = data("ollama").anchors["mlx"]
