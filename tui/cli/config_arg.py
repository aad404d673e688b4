"""``--config FILE``: where every command finds specwatch.toml (kept apart from the live
commands' arguments, so that ``summary`` imports nothing of theirs)."""

from __future__ import annotations

import argparse
from typing import Any


def config_ref(args: argparse.Namespace) -> Any:
    """The ``specwatch.toml`` of ``--config FILE`` (read now: a bad file is said even when no
    name is used), else the default one, read only if a source text could name something in it.
    Raises :class:`tui.core.sources.spec.SourceSpecError`."""
    from tui.core.sources.spec import ConfigRef

    ref = ConfigRef(getattr(args, "config", None))
    if ref.path is not None:
        ref.get()
    return ref
