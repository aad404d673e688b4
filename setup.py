"""Build hook for the optional native scanner (everything else is in pyproject.toml).

``tui/core/parsing/_fastscan.c`` speeds up ``specwatch summary`` on large SGLang logs. It is
optional: when it cannot be compiled (no compiler, no Python headers), the install goes on and
the pure-Python scanner, which it mirrors exactly, is used.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("tui.core.parsing._fastscan", ["tui/core/parsing/_fastscan.c"], optional=True)])
