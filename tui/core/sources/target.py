"""What a source text means, as data: :class:`SourceSpec` (and :class:`SshTarget`), made by the
source kinds (:mod:`tui.core.sources.kinds`) and read by the sources they open.

This module imports nothing of specwatch, so every source implementation can use these types
without importing the registry that imports them (no import cycle).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MAGIC = re.compile(r"[*?[]")
METRICS_SCHEMES = ("metrics+http", "metrics+https", "metrics+ssh")  # a server's /metrics, scraped


def has_magic(text: str) -> bool:
    """Whether ``text`` is a glob pattern (``*``, ``?`` or ``[``)."""
    return _MAGIC.search(text) is not None


class SourceSpecError(ValueError):
    """A source text that cannot be used (one-line message)."""


@dataclass(frozen=True, slots=True)
class SshTarget:
    host: str
    path: str
    user: str | None = None
    port: int | None = None


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """What a source text means. ``kind`` names the kind that read it (``file``, ``glob``,
    ``stdin``, ``pipe``, ``command``, ``ssh``, ``metrics+http``, ``metrics+https``,
    ``metrics+ssh``; see :func:`tui.core.sources.kinds.kind_of`); ``target`` is the path,
    pattern, command, remote path or URL; ``shown`` is the kind's default name for it."""

    kind: str
    target: str
    label: str | None = None
    text: str = ""
    config_name: str | None = None
    ssh: SshTarget | None = None
    shown: str = ""

    @property
    def name(self) -> str:
        """The name shown for this source: its label, its config name, else the kind's name for
        the text (the text itself, ``stdin``, ``cmd:COMMAND``)."""
        return self.label or self.config_name or self.shown or self.text or self.target
