"""import-linter's contracts (pyproject.toml) hold: lint-imports run as a subprocess."""

from __future__ import annotations

from _cli_util import run_cli


def test_import_linter_contracts_hold():
    """The layers in pyproject.toml ([tool.importlinter]), checked as ``lint-imports`` does."""

    code = "from importlinter.cli import lint_imports_command as c; c(['--no-cache'])"
    out = run_cli(python=("-c", code))
    assert out.returncode == 0 and "0 broken" in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]
