"""Log-line parsing: one package per server family (a ``Format`` plug-in, :mod:`.plugin`), listed
in :mod:`.registry`; the line parser (:mod:`.parser`) offers each line to them in order.

``LineParser`` is imported when first asked for: the whole-buffer scanner (``fastscan``) and the
grammar load without the line parsers of every family."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.core.formats.parser import LineParser

__all__ = ["LineParser"]


def __getattr__(name: str) -> Any:
    if name == "LineParser":
        from tui.core.formats.parser import LineParser

        return LineParser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
