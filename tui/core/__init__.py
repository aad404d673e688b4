"""The headless core of specwatch, in rooms: ``model`` (records, columns, the sanitiser),
``formats`` (one plug-in package per server family and the scanners), ``sources`` (where lines
come from), ``pipeline`` (one driver from a source to statistics, events and status), ``stats``,
``alerts``, ``export`` (Prometheus) and ``config`` (``specwatch.toml``).

Nothing under ``tui.core`` may import textual (``tests/integration/test_layers.py`` and
import-linter enforce it), so the headless commands (``summary``, ``stream``, ``export``) and
scripts can use it without a terminal UI.
"""
