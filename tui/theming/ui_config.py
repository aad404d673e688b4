"""The TUI's own remembered choices (the theme), in ``$XDG_CONFIG_HOME/specwatch/tui.json``.

Kept apart from ``specwatch.toml`` (the user's hand-written sources and pairs), which the app
never rewrites. A missing or unreadable file means defaults; writing errors are reported, never
fatal.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tui.core.config.settings import default_config_path

FILE_NAME = "tui.json"


def config_dir() -> Path:
    return default_config_path().parent


def load_ui_config() -> dict:
    try:
        data = json.loads((config_dir() / FILE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_ui_config(**changes) -> Path:
    """Merges ``changes`` into the file (atomically); returns its path; raises OSError."""
    path = config_dir() / FILE_NAME
    data = load_ui_config()
    data.update(changes)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
