"""Source texts, as every command accepts them: ``[LABEL=]SOURCE``, read by the source kinds
(:mod:`tui.core.sources.kinds`).

SOURCE is, in this order:

* ``-``: standard input;
* ``cmd:COMMAND``: a command whose standard output is the log (see :mod:`.command`);
* a name from ``specwatch.toml`` (``[sources]``; see :mod:`tui.core.config.settings`); a ``[pairs]``
  name stands for its two sources where several are taken (:func:`expand_source_args`);
* ``scheme://...``: the kind registered for that scheme: ``ssh://[user@]host[:port]/path``,
  ``metrics+http://host:port/metrics``, ``metrics+https://...``, ``metrics+ssh://host/PORT``
  (a server's Prometheus endpoint, scraped);
* an existing local path (a path containing ``:`` or ``=`` that exists is a local file; a FIFO or
  character device, such as ``<(kubectl logs -f pod)``, is read as a stream; a directory is
  an error);
* ``[user@]host:path`` (scp style): SSH;
* a pattern with ``*``, ``?`` or ``[``: a glob (live: follows the newest match; ``summary``:
  reads the newest match);
* anything else: a local file (followed: it may appear later).

``LABEL=`` names the source (the label shown and written in the output); without one, the
config name, else the text as given, is the name. A label cannot contain ``/``, ``:`` or ``=``;
``./a=b.log`` is always a path.

Config files are read only when a text could be a name in them (:class:`ConfigRef`), so that
``summary FILE`` does not load the config reader.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tui.core.sources.kinds import (
    FALLBACK,
    PARSE_ORDER,
    Probe,
    Summary,
    SummaryError,
    by_scheme,
    kind_of,
)
from tui.core.sources.lines import START, StartAt
from tui.core.sources.target import SourceSpec, SourceSpecError, SshTarget

if TYPE_CHECKING:
    from tui.core.config.settings import Settings
    from tui.core.sources.base import Source

__all__ = [
    "ConfigRef",
    "SourceSpec",
    "SourceSpecError",
    "SshTarget",
    "Summary",
    "SummaryError",
    "expand_source_args",
    "kind_of",
    "open_source",
    "parse_source_spec",
    "split_label",
    "summarize_source",
]

_LABEL_RX = re.compile(r"([^=/:\\]+)=(.+)", re.S)
_URL_RX = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
# The names specwatch.toml accepts for sources and pairs (tui.core.config.settings.NAME_RX; a test
# keeps the two equal): a text that is not such a name never needs the config file read.
NAME_RX = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
CONFIG_NAME = "specwatch.toml"


def default_config_path() -> str:
    """``$XDG_CONFIG_HOME/specwatch/specwatch.toml``, else ``~/.config/specwatch/specwatch.toml``
    (as :func:`tui.core.config.settings.default_config_path`; a test keeps the two equal)."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "specwatch", CONFIG_NAME)


class ConfigRef:
    """A ``specwatch.toml`` read on first need: ``--config FILE`` (which must exist) or the
    default file (none is an empty config). Loading errors are :class:`SourceSpecError`."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path
        self._settings: Settings | None = None
        self._loaded = False

    def might_name(self, text: str) -> bool:
        if NAME_RX.fullmatch(text) is None:
            return False
        return self.path is not None or os.path.exists(default_config_path())

    def get(self) -> Settings | None:
        if not self._loaded:
            from tui.core.config.settings import ConfigError, load_settings

            try:
                self._settings = load_settings(self.path)
            except ConfigError as exc:
                raise SourceSpecError(str(exc)) from None
            self._loaded = True
        return self._settings


def _settings(config: Settings | ConfigRef | None, rest: str) -> Settings | None:
    if isinstance(config, ConfigRef):
        return config.get() if config.might_name(rest) else None
    return config


def split_label(text: str) -> tuple[str | None, str]:
    """``"a=b.log"`` → ``("a", "b.log")``; a text that exists as a local path has no label."""
    m = _LABEL_RX.fullmatch(text)
    if m is None or os.path.lexists(os.path.expanduser(text)):
        return None, text
    label = m.group(1).strip()
    if not label or label.startswith("-"):
        return None, text
    return label, m.group(2)


def parse_source_spec(text: str, config: Settings | ConfigRef | None = None) -> SourceSpec:
    """Reads ``[LABEL=]SOURCE``; raises :class:`SourceSpecError` with a one-line message."""
    if not text or not text.strip():
        raise SourceSpecError("empty source (give a file, a glob, -, cmd:COMMAND or a config name)")
    label, rest = split_label(text)
    probe = Probe(text, label, rest)
    if rest == "-" or rest.startswith("cmd:"):
        return _parse_plain(probe)
    settings = _settings(config, rest)
    if settings is not None and rest in settings.sources:
        entry = settings.sources[rest]
        try:
            inner = parse_source_spec(entry.source, None)
        except SourceSpecError as exc:
            where = f" in {settings.path}" if settings.path else ""
            raise SourceSpecError(f"source {rest!r}{where}: {exc}") from None
        return replace(inner, label=label or entry.label or inner.label, config_name=rest, text=text)
    if settings is not None and rest in settings.pairs:
        raise SourceSpecError(f"{rest!r} is a pair of sources in the config, not one source")
    scheme = _URL_RX.match(rest)
    if scheme is not None:
        kind = by_scheme(scheme.group(1))
        spec = kind.parse(probe) if kind is not None else None
        if spec is None:
            raise SourceSpecError(f"{text}: {scheme.group(1).lower()}:// sources are not supported")
        return spec
    return _parse_plain(probe)


def _parse_plain(probe: Probe) -> SourceSpec:
    for kind in PARSE_ORDER:
        spec = kind.parse(probe)
        if spec is not None:
            return spec
    return FALLBACK.spec(probe, probe.rest)


def expand_source_args(texts: list[str], config: Settings | ConfigRef | None = None) -> list[SourceSpec]:
    """Source texts of a command line; a config pair name stands for its two sources."""
    specs: list[SourceSpec] = []
    for text in texts:
        label, rest = split_label(text)
        settings = _settings(config, rest)
        pair = settings.pairs.get(rest) if settings is not None else None
        if pair is not None and not os.path.lexists(os.path.expanduser(rest)):
            if label:
                raise SourceSpecError(f"{text}: a pair ({rest!r}) cannot take a label")
            specs += [parse_source_spec(pair.a, settings), parse_source_spec(pair.b, settings)]
        else:
            specs.append(parse_source_spec(text, config))
    if sum(kind_of(s).reads_stdin for s in specs) > 1:
        raise SourceSpecError("stdin (-) can be read only once")
    return specs


def open_source(spec: SourceSpec, *, follow: bool = True, start: StartAt = START, **options: Any) -> Source:
    """A live source for ``spec``. ``follow``/``start`` apply to files and globs (streams are
    read as they come, to their end); ``options`` tune followers (poll_interval, idle_after,
    SSH and scrape settings...)."""
    return kind_of(spec).open(spec, follow=follow, start=start, **options)


def source_labels(specs: list[SourceSpec]) -> list[str]:
    """The labels of sources shown together, all different (:mod:`tui.core.sources.labels`:
    alike file names lengthened to the path suffix that tells them apart)."""
    from tui.core.sources.labels import Named, distinct_labels

    items = []
    for spec in specs:
        kind = kind_of(spec)
        fixed = bool(spec.label or spec.config_name)
        items.append(
            Named(kind.label(spec), fixed, None if fixed else kind.label_path(spec), kind.host(spec))
        )
    return distinct_labels(items)


def summarize_source(spec: SourceSpec, label: str | None = None, **options: Any) -> Summary:
    """``spec`` read whole for ``summary`` (``options``: ``workers``, ``duration``, SSH and
    metrics settings); :class:`SummaryError` when it cannot be read."""
    kind = kind_of(spec)
    return kind.summarize(spec, label or kind.label(spec), options)
