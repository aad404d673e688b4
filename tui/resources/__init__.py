"""The data specwatch ships: theme files and sample logs.

The repository keeps them in its top-level ``themes/`` and ``sample_logs/`` folders (the one
source of truth); a build copies them into this package (``tui/resources/themes``,
``tui/resources/sample_logs``: the ``build_py`` hook in setup.py), so every install — a wheel,
``pip install --user``, ``pip install --target DIR``, a zipped copy — finds them through
:func:`importlib.resources.files`. A run from a checkout (source tree or editable install) has no
copies and falls back to the checkout's own folders. Nothing else is searched.

The folders are returned as :class:`~importlib.abc.Traversable` objects (a real directory or a
folder inside a zip): read files with ``read_text`` / ``read_bytes``, and use
:func:`importlib.resources.as_file` where a real path is needed.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

THEMES = "themes"
SAMPLE_LOGS = "sample_logs"
_CHECKOUT = Path(__file__).resolve().parents[2]  # the repository root, in a source tree


def _folder(name: str) -> Traversable | None:
    """The packaged folder ``name``, else the checkout's top-level one, else None."""
    packaged = files(__name__) / name
    if packaged.is_dir():
        return packaged
    checkout = _CHECKOUT / name
    return checkout if checkout.is_dir() else None


def themes() -> Traversable | None:
    """The folder of the shipped theme files (``*.toml``), or None when this copy has none."""
    return _folder(THEMES)


def sample_logs() -> Traversable | None:
    """The folder of the bundled sample logs (``*.log``), or None when this copy has none."""
    return _folder(SAMPLE_LOGS)


def listing(folder: Traversable | None, suffix: str) -> list[Traversable]:
    """The files in ``folder`` whose names end with ``suffix``, by name (none for None)."""
    if folder is None:
        return []
    return sorted(
        (f for f in folder.iterdir() if f.name.endswith(suffix) and f.is_file()), key=lambda f: f.name
    )
