"""The core never imports textual; headless commands never load the TUI."""

from __future__ import annotations

import pkgutil

from _cli_util import run_cli

import tui.core


def test_core_does_not_import_textual():
    modules = [m.name for m in pkgutil.walk_packages(tui.core.__path__, "tui.core.")]
    assert len(modules) > 15
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(bad))\n"
    )
    out = run_cli(python=("-c", code))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_summary_command_does_not_load_textual(tmp_path):
    log = tmp_path / "a.log"
    log.write_text("[2026-01-01 00:00:00] Decode batch, #running-req: 1, accept len: 2.00\n")
    code = (
        "import sys\nfrom tui.cli import main\n"
        f"rc = main(['summary', '--json', {str(log)!r}])\n"
        "print('TEXTUAL' if any(m.startswith('textual') for m in sys.modules) else 'CLEAN', rc, file=sys.stderr)\n"
    )
    out = run_cli(python=("-c", code))
    assert out.stderr.strip().endswith("CLEAN 0"), out.stderr
