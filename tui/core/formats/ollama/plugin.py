"""The Ollama plug-in (see :mod:`tui.core.formats.plugin`)."""

from __future__ import annotations

from typing import Any

from tui.core.formats.ollama import grammar
from tui.core.formats.ollama.mlx import parse_mlx
from tui.core.formats.plugin import NOT_MINE, Format, Line


class Ollama(Format):
    def parse(self, state: Any, line: Line) -> Any:
        at = line.text.find(grammar.MLX)
        if at < 0:
            return NOT_MINE
        return parse_mlx(line.source, line.line_no, line.offset, line.text, at, line.raw)
