"""Log-line parsing: one module per server family, a registry that auto-detects them.

``LineParser`` is imported when first asked for: the whole-buffer scanner (``fastscan``) and the
grammar load without the line parsers of every family."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.core.formats.registry import LineParser

__all__ = ["LineParser"]


def __getattr__(name: str) -> Any:
    if name == "LineParser":
        from tui.core.formats.registry import LineParser

        return LineParser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
