"""Build hook for the optional native parts (everything else is in pyproject.toml).

``tui/core/formats/_fastscan.c`` (the whole-buffer scanner) and ``tui/core/stats/_reduce.c``
(the statistics' reduction of a run in the common form) speed up ``specwatch summary`` on large
logs. They are optional: when they cannot be compiled (no compiler, no Python headers), the
install goes on and the pure-Python code, which they mirror exactly, is used.
``-ffp-contract=off``: no fused multiply-add, so every product and sum is rounded as Python
rounds it. ``-Wextra``: the code is kept free of warnings with GCC and Clang
(tests/integration/test_native_build.py). ``SPECWATCH_NATIVE=0`` at run time ignores a build
(tui/core/native.py).

``build_py`` also copies the repository's top-level ``themes/*.toml`` and ``sample_logs/*.log``
(their one source of truth) into the built package as ``tui/resources/{themes,sample_logs}``, where
:mod:`tui.resources` finds them in any install. An editable install copies nothing: it reads the
checkout's folders.
"""

from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

FLAGS = ["-ffp-contract=off", "-Wextra"]
HERE = Path(__file__).resolve().parent
RESOURCES = {"themes": "*.toml", "sample_logs": "*.log"}  # top-level folder -> files shipped


class build_py_with_resources(build_py):
    """build_py, then the resource folders copied into ``<build>/tui/resources/``."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for folder, pattern in RESOURCES.items():
            found = sorted((HERE / folder).glob(pattern))
            if not found:
                raise SystemExit(f"setup.py: no {folder}/{pattern} to ship (an incomplete source tree?)")
            dest = Path(self.build_lib) / "tui" / "resources" / folder
            self.mkpath(str(dest))
            for path in found:
                self.copy_file(str(path), str(dest / path.name))


setup(
    cmdclass={"build_py": build_py_with_resources},
    ext_modules=[
        Extension(
            "tui.core.formats._fastscan",
            ["tui/core/formats/_fastscan.c"],
            depends=[
                "tui/core/formats/_fastscan_text.h",
                "tui/core/formats/_fastscan_search.h",
                "tui/core/formats/_fastscan_simd.h",
                "tui/core/formats/_fastscan_match.h",
                "tui/core/formats/_fastscan_configure.h",
            ],
            optional=True,
            extra_compile_args=FLAGS,
        ),
        Extension(
            "tui.core.stats._reduce",
            ["tui/core/stats/_reduce.c"],
            depends=["tui/core/stats/_reduce_compute.h", "tui/core/stats/_reduce_requests.h"],
            optional=True,
            extra_compile_args=FLAGS,
        ),
    ],
)
