"""The one switch for the optional C extensions (built by setup.py): ``SPECWATCH_NATIVE=0`` in the
environment makes :func:`load` give None for every one of them, so the pure-Python code they
mirror runs instead (the tests and CI use it to check that both give the same output). Read once,
when a module that uses an extension is imported."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

ENV = "SPECWATCH_NATIVE"


def disabled() -> bool:
    """True when ``SPECWATCH_NATIVE=0`` asks for the pure-Python code."""
    return os.environ.get(ENV, "").strip() == "0"


def load(name: str) -> ModuleType | None:
    """The extension module ``name`` (e.g. ``tui.core.formats._fastscan``); None when it is not
    built or when :func:`disabled`."""
    if disabled():
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
