"""Log-line parsing: one module per server family, a registry that auto-detects them."""

from tui.core.parsing.registry import LineParser

__all__ = ["LineParser"]
