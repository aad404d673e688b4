"""The Ollama plug-in (see :mod:`tui.core.formats.plugin`)."""

from __future__ import annotations

from typing import Any, ClassVar

from tui.core.formats.ollama import grammar
from tui.core.formats.ollama.mlx import parse_mlx
from tui.core.formats.plugin import NOT_MINE, Format, Line


class Ollama(Format):
    name = "ollama"
    display = "Ollama"
    anchors: ClassVar[tuple[str, ...]] = (grammar.MLX,)
    requests_name_family = False  # as it was before plug-ins: its request segments keep no family

    def parse(self, state: Any, line: Line) -> Any:
        at = line.text.find(grammar.MLX)
        if at < 0:
            return NOT_MINE
        return parse_mlx(line.source, line.line_no, line.offset, line.text, at, line.raw)
