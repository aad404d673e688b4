"""Tests of the C extensions: what to do when one is not loaded."""

from __future__ import annotations

import os

import pytest

from tui.core import native


def require_native(what: str) -> None:
    """Skip when ``SPECWATCH_NATIVE=0`` turned the extensions off (CI runs the tests that way
    too); else the build is missing: a skip on a developer's machine, a failure in CI (as
    :func:`_ci.missing`). Usable at module level."""
    if native.disabled():
        pytest.skip(f"{what}: off (SPECWATCH_NATIVE=0)", allow_module_level=True)
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{what} is not built (required in CI)", pytrace=False)
    pytest.skip(f"{what} is not built (python setup.py build_ext --inplace)", allow_module_level=True)
