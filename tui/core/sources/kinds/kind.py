"""What every source kind is: :class:`SourceKind`, the :class:`Probe` it reads a text from, the
:class:`Summary` it returns for ``summary``, and helpers the kinds share."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from tui.core.sources.target import SourceSpec, SshTarget

if TYPE_CHECKING:
    from tui.core.sources.base import Source
    from tui.core.stats import SourceStats


class Summary(Protocol):
    """What :meth:`SourceKind.summarize` returns (``tui.core.pipeline.whole.Summarizer`` and
    ``tui.core.pipeline.whole_metrics.MetricsSummary`` are two)."""

    @property
    def stats(self) -> SourceStats: ...

    def result(self) -> dict: ...


class SummaryError(Exception):
    """A source that could not be read whole (one-line message)."""


class Probe:
    """A source text, its label taken off, as the kinds look at it (the local path's status is
    read once, on first use)."""

    def __init__(self, text: str, label: str | None, rest: str) -> None:
        self.text, self.label, self.rest = text, label, rest
        self._st: os.stat_result | None = None
        self._statted = False

    @property
    def st(self) -> os.stat_result | None:
        if not self._statted:
            self._statted = True
            try:
                self._st = os.stat(os.path.expanduser(self.rest))
            except (OSError, ValueError):
                self._st = None
        return self._st


FOLLOW_OPTIONS = {"poll_interval", "safety_interval", "settle", "idle_after", "use_inotify"}


def idle_option(options: dict[str, Any]) -> dict[str, Any]:
    return {"idle_after": options["idle_after"]} if "idle_after" in options else {}


def nice_path(path: str) -> str:
    """A path as short as it can be said: relative under the current directory, ~ for home."""
    full = os.path.abspath(os.path.expanduser(path))
    cwd = os.getcwd()
    if full.startswith(cwd + os.sep):
        return os.path.relpath(full, cwd)
    home = os.path.expanduser("~")
    if home not in ("", "/") and full.startswith(home + os.sep):
        return "~" + full[len(home) :]
    return full


def read_error(what: str, exc: OSError) -> SummaryError:
    if isinstance(exc, FileNotFoundError):
        return SummaryError(f"{what}: no such file")
    if isinstance(exc, PermissionError):
        return SummaryError(f"{what}: permission denied")
    if isinstance(exc, IsADirectoryError):
        return SummaryError(f"{what}: is a directory")
    return SummaryError(f"{what}: {exc.strerror or exc}")


def attach_local_drafts(s: Summary) -> Summary:
    from tui.core.formats import draft_config

    draft_config.attach(s.stats)  # the draft's config.json, read on this machine
    return s


class SourceKind(ABC):
    """One kind of source. Subclasses set :attr:`name`, implement :meth:`open` and
    :meth:`summarize`, and override what else applies."""

    name: ClassVar[str] = ""
    schemes: ClassVar[tuple[str, ...]] = ()  # ``scheme://`` texts this kind reads
    reads_stdin: ClassVar[bool] = False

    def parse(self, probe: Probe) -> SourceSpec | None:
        """The spec of ``probe`` if this kind reads it, else None; :class:`SourceSpecError`
        when it is this kind's text but unusable."""
        return None

    def spec(self, probe: Probe, target: str, shown: str = "", ssh: SshTarget | None = None) -> SourceSpec:
        return SourceSpec(self.name, target, probe.label, probe.text, ssh=ssh, shown=shown or probe.rest)

    @abstractmethod
    def open(self, spec: SourceSpec, *, follow: bool, start: Any, **options: Any) -> Source:
        """The live source (``follow``/``start`` apply to files; ``options`` tune it)."""

    @abstractmethod
    def summarize(self, spec: SourceSpec, label: str, options: dict[str, Any]) -> Summary:
        """The whole source read once (``options``: ``workers``, ``duration``, SSH and metrics
        settings); :class:`SummaryError` when it cannot be read."""

    def label(self, spec: SourceSpec) -> str:
        """A short pane label when none was given: the file name, host:file, cmd:PROGRAM."""
        return spec.name

    def label_path(self, spec: SourceSpec) -> str | None:
        """The path whose suffixes tell this source from others of the same label
        (:mod:`tui.core.sources.labels`): absolute for a local file, as given for a remote one."""
        return None

    def where(self, spec: SourceSpec) -> str:
        """Where the source is, said for people (relative paths, ``$ command``...)."""
        return spec.target

    def location(self, spec: SourceSpec) -> str:
        """Where the source is, said for a dashboard (absolute paths)."""
        return self.where(spec)

    def host(self, spec: SourceSpec) -> str | None:
        """The machine the lines come from, when it is not this one."""
        return None

    def local_path(self, spec: SourceSpec) -> str | None:
        """The local file followed, when there is exactly one."""
        return None

    def whole_file(self, spec: SourceSpec) -> str | None:
        """The local file a whole read (``summary``, ``replay``) takes, when there is one."""
        return self.local_path(spec)

    def whole_files(self, spec: SourceSpec, *, history: bool = False) -> list[str] | None:
        """The local files a whole read takes, oldest first (a rotated set with ``history``)."""
        path = self.whole_file(spec)
        return None if path is None else [path]
