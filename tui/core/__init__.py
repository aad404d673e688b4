"""The headless core of specwatch: sources, parsing, statistics.

Nothing under ``tui.core`` may import textual (``tests/integration/test_layers.py`` enforces it), so the
headless commands (``summary``, ``stream``) and scripts can use it without a terminal UI.
"""
