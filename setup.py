"""Build hook for the optional native parts (everything else is in pyproject.toml).

``tui/core/formats/_fastscan.c`` (the whole-buffer scanner) and ``tui/core/stats/_reduce.c``
(the statistics' reduction of a run in the common form) speed up ``specwatch summary`` on large
logs. They are optional: when they cannot be compiled (no compiler, no Python headers), the
install goes on and the pure-Python code, which they mirror exactly, is used.
``-ffp-contract=off``: no fused multiply-add, so every product and sum is rounded as Python
rounds it. ``-Wextra``: the code is kept free of warnings with GCC and Clang
(tests/integration/test_native_build.py). ``SPECWATCH_NATIVE=0`` at run time ignores a build
(tui/core/native.py).
"""

from setuptools import Extension, setup

FLAGS = ["-ffp-contract=off", "-Wextra"]

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
            "tui.core.stats._reduce",
            ["tui/core/stats/_reduce.c"],
            depends=["tui/core/stats/_reduce_compute.h"],
            optional=True,
            extra_compile_args=FLAGS,
        ),
    ]
)
