"""The TUI commands as a subprocess: without a terminal they say so, and the headless commands load no TUI module."""

from __future__ import annotations

from _cli_util import ROOT, run_cli

A = str(ROOT / "sample_logs" / "ab_a.log")


def test_needs_a_terminal():
    r = run_cli("replay", A)
    assert r.returncode == 2 and "needs a terminal" in r.stderr


def test_tui_modules_do_not_load_for_headless_commands():
    code = (
        "import sys; from tui.cli import build_parser; build_parser(); "
        "print(any(m == 'textual' or m.startswith('textual.') for m in sys.modules))"
    )
    r = run_cli(python=("-c", code))
    assert r.stdout.strip() == "False"
