"""Build hook for the optional native parts (everything else is in pyproject.toml).

``tui/core/formats/_fastscan.c`` (the whole-buffer scanner) and ``tui/core/stats/_reduce.c``
(the statistics' reduction of a run in the common form) speed up ``specwatch summary`` on large
logs. They are optional: when they cannot be compiled (no compiler, no Python headers), the
install goes on and the pure-Python code, which they mirror exactly, is used.
``-ffp-contract=off``: no fused multiply-add, so every product and sum is rounded as Python
rounds it.
"""

from setuptools import Extension, setup

FLAGS = ["-ffp-contract=off"]

setup(
    ext_modules=[
        Extension(
            "tui.core.formats._fastscan",
            ["tui/core/formats/_fastscan.c"],
            depends=["tui/core/formats/_fastscan_text.h", "tui/core/formats/_fastscan_search.h"],
            optional=True,
            extra_compile_args=FLAGS,
        ),
        Extension(
            "tui.core.stats._reduce", ["tui/core/stats/_reduce.c"], optional=True, extra_compile_args=FLAGS
        ),
    ]
)
