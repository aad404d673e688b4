"""The source kinds: one object per kind of SOURCE text.

A kind reads its texts (:meth:`SourceKind.parse`), opens a live source (:meth:`SourceKind.open`),
reads a whole source for ``summary`` (:meth:`SourceKind.summarize`) and says what to call it
(:meth:`SourceKind.label`) and where it is (:meth:`SourceKind.where`, :meth:`SourceKind.host`,
:meth:`SourceKind.local_path`). This package is the registry: :mod:`tui.core.sources.spec` tries
the kinds in :data:`PARSE_ORDER` and finds a spec's kind with :func:`kind_of`; no command
switches on kind names. The kinds live in :mod:`.base` (the interface), :mod:`.local` (file,
glob, pipe, stdin, command) and :mod:`.remote` (SSH, metrics).

Every kind imports what it needs inside its methods (asyncssh, watchfiles, asyncio, the
scanner...), so that reading a source text costs nothing and ``summary FILE`` loads only the
file reader. The kinds import the source implementations; those import only
:mod:`tui.core.sources.target` (the data types), never this module: there is no import cycle.
"""

from __future__ import annotations

from tui.core.sources.kinds.kind import (
    Probe,
    SourceKind,
    Summary,
    SummaryError,
    nice_path,
)
from tui.core.sources.kinds.local_kinds import (
    CommandKind,
    FileKind,
    GlobKind,
    PipeKind,
    StdinKind,
    newest_match,
)
from tui.core.sources.kinds.remote_kinds import MetricsKind, SshKind
from tui.core.sources.target import SourceSpec, SourceSpecError

__all__ = [
    "COMMAND",
    "FILE",
    "GLOB",
    "METRICS",
    "PARSE_ORDER",
    "PIPE",
    "SSH",
    "STDIN",
    "CommandKind",
    "FileKind",
    "GlobKind",
    "MetricsKind",
    "PipeKind",
    "Probe",
    "SourceKind",
    "SshKind",
    "StdinKind",
    "Summary",
    "SummaryError",
    "by_scheme",
    "kind_of",
    "newest_match",
    "nice_path",
    "register",
]

FILE, GLOB, PIPE = FileKind(), GlobKind(), PipeKind()
STDIN, COMMAND, SSH, METRICS = StdinKind(), CommandKind(), SshKind(), MetricsKind()

# The order in which a source text is tried (after config names and ``scheme://`` texts,
# see :func:`tui.core.sources.spec.parse_source_spec`): an existing local path wins over
# ``host:path``; a text nothing reads is a local file that may appear later.
PARSE_ORDER: list[SourceKind] = [STDIN, COMMAND, FILE, PIPE, SSH, GLOB]
FALLBACK: SourceKind = FILE

_BY_NAME: dict[str, SourceKind] = {}
_BY_SCHEME: dict[str, SourceKind] = {}


def register(kind: SourceKind, *, parse_before: SourceKind | None = None) -> None:
    """Plug in a kind: specs find it by its :attr:`~SourceKind.name` (or a scheme of its
    :attr:`~SourceKind.schemes`, which a ``scheme://`` text is given to); with
    ``parse_before``, plain texts are also offered to it ahead of that kind."""
    _BY_NAME[kind.name] = kind
    for scheme in kind.schemes:
        _BY_SCHEME[scheme] = kind
    if parse_before is not None and kind not in PARSE_ORDER:
        PARSE_ORDER.insert(PARSE_ORDER.index(parse_before), kind)


for _kind in (FILE, GLOB, PIPE, STDIN, COMMAND, SSH, METRICS):
    register(_kind)


def kind_of(spec: SourceSpec) -> SourceKind:
    """The kind that reads ``spec`` (a :class:`SourceSpecError` for a kind not registered)."""
    kind = _BY_NAME.get(spec.kind) or _BY_SCHEME.get(spec.kind)
    if kind is None:
        raise SourceSpecError(f"{spec.text or spec.target}: {spec.kind} sources are not supported")
    return kind


def by_scheme(scheme: str) -> SourceKind | None:
    return _BY_SCHEME.get(scheme.lower())
