"""The C extensions compile without a warning (``-Wall -Wextra -Werror``) with the compiler that
builds Python's extensions and with Clang when it is installed: portable C, no compiler-specific
builtins or x86-only intrinsics needed (setup.py builds them with the same warnings on)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest
from _ci import missing

ROOT = Path(__file__).resolve().parent.parent.parent
SOURCES = ["tui/core/formats/_fastscan.c", "tui/core/stats/_reduce.c"]


def _compiler(name: str) -> str | None:
    if name == "python's":
        cc = shlex.split(sysconfig.get_config_var("CC") or "cc")[0]
        return shutil.which(cc)
    return shutil.which(name)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("compiler", ["python's", "clang"])
def test_the_c_extensions_compile_without_a_warning(compiler: str, source: str, tmp_path: Path) -> None:
    cc = _compiler(compiler)
    if cc is None:
        if compiler == "clang":
            missing("clang is not installed (apt-get install clang; .ci/run installs it)")
        missing("no C compiler (the one Python's extensions are built with)")
    include = sysconfig.get_paths()["include"]
    cmd = [cc, "-c", "-O2", "-fPIC", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off", f"-I{include}"]
    out = subprocess.run(
        [*cmd, source, "-o", str(tmp_path / "x.o")], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "warning" not in out.stderr, out.stderr[-3000:]
