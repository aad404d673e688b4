"""Source texts, as every command accepts them: ``[LABEL=]SOURCE``.

SOURCE is, in this order:

* ``-``: standard input;
* ``cmd:COMMAND``: a command whose standard output is the log (see :mod:`.command`);
* a name from ``specwatch.toml`` (``[sources]``; see :mod:`tui.core.settings`);
* ``ssh://[user@]host[:port]/path`` (other ``scheme://`` sources plug in the same way:
  ``metrics+http://host:port/metrics``, ``metrics+https://...`` and
  ``metrics+ssh://host/PORT`` scrape a server's Prometheus endpoint, see :mod:`.metrics`);
* an existing local path (a path containing ``:`` or ``=`` that exists is a local file; a FIFO or
  character device, such as ``<(kubectl logs -f pod)``, is read as a stream);
* ``[user@]host:path`` (scp style): SSH. SSH sources plug in through
  :func:`register_source_kind` (``"ssh"``); until then they are a clear error, never a local path;
* a pattern with ``*``, ``?`` or ``[``: a glob that follows the newest match;
* anything else: a local file (followed: it may appear later).

``LABEL=`` names the source (the label shown and written in the output); without one, the
config name, else the text as given, is the name. A label cannot contain ``/``, ``:`` or ``=``;
``./a=b.log`` is always a path.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from tui.core.settings import Settings
from tui.core.sources.base import Source
from tui.core.sources.glob import has_magic
from tui.core.sources.lines import START, StartAt


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
    """What a source text means. ``kind`` is one of ``file``, ``glob``, ``stdin``, ``pipe``,
    ``command``, ``ssh``; ``target`` is the path, pattern, command or remote path."""

    kind: str
    target: str
    label: str | None = None
    text: str = ""
    config_name: str | None = None
    ssh: SshTarget | None = None

    @property
    def name(self) -> str:
        """The name shown for this source: its label, its config name, or the text given."""
        if self.label:
            return self.label
        if self.config_name:
            return self.config_name
        if self.kind == "stdin":
            return "stdin"
        if self.kind == "command":
            return f"cmd:{self.target}"
        return self.target if self.kind in ("file", "glob", "pipe") else _strip_label(self.text)


# kind -> opener(spec, follow=..., start=..., **options). The SSH issue registers "ssh" here.
Opener = Callable[..., Source]
_OPENERS: dict[str, Opener] = {}
_CHECKS: dict[str, Callable[[SourceSpec], None]] = {}


def register_source_kind(
    kind: str, opener: Opener, check: Callable[[SourceSpec], None] | None = None
) -> None:
    """Plug in a source kind (``"ssh"``); ``opener(spec, *, follow, start, **options)``.
    ``check(spec)``, when given, validates a ``kind://`` text as it is read (raising
    :class:`SourceSpecError`), so a bad address is said before anything is opened."""
    _OPENERS[kind] = opener
    if check is not None:
        _CHECKS[kind] = check


_LABEL_RX = re.compile(r"([^=/:\\]+)=(.+)", re.S)
_URL_RX = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_SCP_RX = re.compile(
    r"(?:(?P<user>[^@/:\s]+)@)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^@/:\s\[\]]+):(?P<path>.*)", re.S
)


def split_label(text: str) -> tuple[str | None, str]:
    """``"a=b.log"`` → ``("a", "b.log")``; a text that exists as a local path has no label."""
    m = _LABEL_RX.fullmatch(text)
    if m is None or os.path.lexists(os.path.expanduser(text)):
        return None, text
    label = m.group(1).strip()
    if not label or label.startswith("-"):
        return None, text
    return label, m.group(2)


def _strip_label(text: str) -> str:
    return split_label(text)[1]


def parse_source_spec(text: str, config: Settings | None = None) -> SourceSpec:
    """Reads ``[LABEL=]SOURCE``; raises :class:`SourceSpecError` with a one-line message."""
    if not text or not text.strip():
        raise SourceSpecError("empty source (give a file, a glob, -, cmd:COMMAND or a config name)")
    label, rest = split_label(text)
    if rest == "-":
        return SourceSpec("stdin", "-", label, text)
    if rest.startswith("cmd:"):
        command = rest[4:].strip()
        if not command:
            raise SourceSpecError(f"{text}: cmd: needs a command, as in cmd:'kubectl logs -f POD'")
        return SourceSpec("command", command, label, text)
    if config is not None and rest in config.sources:
        entry = config.sources[rest]
        try:
            inner = parse_source_spec(entry.source, None)
        except SourceSpecError as exc:
            where = f" in {config.path}" if config.path else ""
            raise SourceSpecError(f"source {rest!r}{where}: {exc}") from None
        return replace(inner, label=label or entry.label or inner.label, config_name=rest, text=text)
    if config is not None and rest in config.pairs:
        raise SourceSpecError(f"{rest!r} is a pair of sources in the config, not one source")
    if rest.startswith("ssh://"):
        return _ssh(text, label, _parse_ssh_url(text, rest))
    scheme = _URL_RX.match(rest)
    if scheme is not None:
        kind = scheme.group(1).lower()
        if kind not in _OPENERS:
            raise SourceSpecError(f"{text}: {kind}:// sources are not supported")
        spec = SourceSpec(kind, rest, label, text)
        if kind in _CHECKS:
            _CHECKS[kind](spec)
        return spec
    local = os.path.expanduser(rest)
    try:
        st = os.stat(local)
    except OSError:
        st = None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise SourceSpecError(
                f"{rest} is a directory (give a file or a glob such as '{rest.rstrip('/')}/*.log')"
            )
        kind = "file" if stat.S_ISREG(st.st_mode) else "pipe"
        return SourceSpec(kind, rest, label, text)
    m = _SCP_RX.fullmatch(rest)
    if m is not None and m.group("path"):
        return _ssh(text, label, SshTarget(m.group("host").strip("[]"), m.group("path"), m.group("user")))
    if has_magic(rest):
        return SourceSpec("glob", rest, label, text)
    return SourceSpec("file", rest, label, text)


def _parse_ssh_url(text: str, rest: str) -> SshTarget:
    try:
        u = urlsplit(rest)
        port = u.port
    except ValueError as exc:
        raise SourceSpecError(f"{text}: not a valid ssh:// address ({exc})") from None
    if not u.hostname or not u.path or u.path == "/":
        raise SourceSpecError(
            f"{text}: an ssh:// address needs a host and a path: ssh://[user@]host[:port]/path"
        )
    return SshTarget(u.hostname, u.path, u.username, port)


def _ssh(text: str, label: str | None, target: SshTarget) -> SourceSpec:
    if "ssh" not in _OPENERS:
        hint = (
            ""
            if target.path.startswith("/")
            else (f" (a local file whose name contains ':' can be given as ./{_strip_label(text)})")
        )
        raise SourceSpecError(f"{text}: SSH sources are not supported yet{hint}")
    return SourceSpec("ssh", target.path, label, text, ssh=target)


def expand_source_args(texts: list[str], config: Settings | None = None) -> list[SourceSpec]:
    """Source texts of a command line; a config pair name stands for its two sources."""
    specs: list[SourceSpec] = []
    for text in texts:
        label, rest = split_label(text)
        pair = config.pairs.get(rest) if config is not None else None
        if pair is not None and not os.path.lexists(os.path.expanduser(rest)):
            if label:
                raise SourceSpecError(f"{text}: a pair ({rest!r}) cannot take a label")
            specs += [parse_source_spec(pair.a, config), parse_source_spec(pair.b, config)]
        else:
            specs.append(parse_source_spec(text, config))
    if sum(s.kind == "stdin" for s in specs) > 1:
        raise SourceSpecError("stdin (-) can be read only once")
    return specs


_FOLLOW_OPTIONS = {"poll_interval", "safety_interval", "settle", "idle_after", "use_inotify"}


def open_source(spec: SourceSpec, *, follow: bool = True, start: StartAt = START, **options) -> Source:
    """A source for ``spec``. ``follow``/``start`` apply to files and globs (streams are read as
    they come, to their end); ``options`` tune followers (poll_interval, idle_after, ...)."""
    idle = {"idle_after": options["idle_after"]} if "idle_after" in options else {}
    if spec.kind in ("file", "glob"):
        from tui.core.sources.file import FileSource
        from tui.core.sources.glob import GlobSource

        cls = FileSource if spec.kind == "file" else GlobSource
        opts = {k: v for k, v in options.items() if k in _FOLLOW_OPTIONS}
        return cls(spec.target, spec.name, follow=follow, start=start, **opts)
    if spec.kind == "stdin":
        from tui.core.sources.stdin import stdin_source

        return stdin_source(spec.name, **idle)
    if spec.kind == "pipe":
        from tui.core.sources.stdin import open_pipe

        try:
            return open_pipe(os.path.expanduser(spec.target), spec.name, **idle)
        except OSError as exc:
            raise SourceSpecError(f"cannot read {spec.target}: {exc.strerror or exc}") from None
    if spec.kind == "command":
        from tui.core.sources.command import CommandSource

        return CommandSource(spec.target, spec.name, **idle)
    opener = _OPENERS.get(spec.kind)
    if opener is None:
        raise SourceSpecError(f"{spec.text}: {spec.kind} sources are not supported yet")
    return opener(spec, follow=follow, start=start, **options)


def _open_ssh(spec: SourceSpec, **kwargs) -> Source:
    from tui.core.sources.ssh.source import (
        open_ssh,  # asyncssh is imported only when an SSH source is opened
    )

    return open_ssh(spec, **kwargs)


register_source_kind("ssh", _open_ssh)


def _open_metrics(spec: SourceSpec, **kwargs) -> Source:
    from tui.core.sources.prom.scraper import (
        open_metrics,  # imported only when a metrics source is opened
    )

    return open_metrics(spec, **kwargs)


def _check_metrics(spec: SourceSpec) -> None:
    from tui.core.sources.prom.scraper import check_metrics_spec

    check_metrics_spec(spec)


for _kind in ("metrics+http", "metrics+https", "metrics+ssh"):
    register_source_kind(_kind, _open_metrics, _check_metrics)
