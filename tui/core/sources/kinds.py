"""The source kinds: one object per kind of SOURCE text.

A kind reads its texts (:meth:`SourceKind.parse`), opens a live source (:meth:`SourceKind.open`),
reads a whole source for ``summary`` (:meth:`SourceKind.summarize`) and says what to call it
(:meth:`SourceKind.label`) and where it is (:meth:`SourceKind.where`, :meth:`SourceKind.host`,
:meth:`SourceKind.local_path`). The registry (:mod:`tui.core.sources.spec`) tries the kinds in
:data:`PARSE_ORDER` and finds a spec's kind with :func:`kind_of`; no command switches on kind names.

Every kind imports what it needs inside its methods (asyncssh, watchfiles, asyncio, the
scanner...), so that reading a source text costs nothing and ``summary FILE`` loads only the
file reader. The kinds import the source implementations; those import only
:mod:`tui.core.sources.target` (the data types), never this module: there is no import cycle.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from typing import TYPE_CHECKING, Any, BinaryIO, ClassVar, Protocol, cast
from urllib.parse import urlsplit

from tui.core.sources.target import METRICS_SCHEMES, SourceSpec, SourceSpecError, SshTarget, has_magic

if TYPE_CHECKING:
    from tui.core.sources.base import Source
    from tui.core.stats import SourceStats


class Summary(Protocol):
    """What :meth:`SourceKind.summarize` returns (``tui.core.summary.Summarizer`` and
    ``tui.core.metrics_summary.MetricsSummary`` are two)."""

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


_FOLLOW_OPTIONS = {"poll_interval", "safety_interval", "settle", "idle_after", "use_inotify"}


def _idle(options: dict[str, Any]) -> dict[str, Any]:
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


def _read_error(what: str, exc: OSError) -> SummaryError:
    if isinstance(exc, FileNotFoundError):
        return SummaryError(f"{what}: no such file")
    if isinstance(exc, PermissionError):
        return SummaryError(f"{what}: permission denied")
    if isinstance(exc, IsADirectoryError):
        return SummaryError(f"{what}: is a directory")
    return SummaryError(f"{what}: {exc.strerror or exc}")


def _attach_local_drafts(s: Summary) -> Summary:
    from tui.core import draft_config

    draft_config.attach(s.stats)  # the draft's config.json, read on this machine
    return s


class SourceKind:
    """One kind of source. Subclasses set :attr:`name` and override what applies."""

    name: ClassVar[str] = ""
    schemes: ClassVar[tuple[str, ...]] = ()  # ``scheme://`` texts this kind reads
    reads_stdin: ClassVar[bool] = False

    def parse(self, probe: Probe) -> SourceSpec | None:
        """The spec of ``probe`` if this kind reads it, else None; :class:`SourceSpecError`
        when it is this kind's text but unusable."""
        return None

    def spec(self, probe: Probe, target: str, shown: str = "", ssh: SshTarget | None = None) -> SourceSpec:
        return SourceSpec(self.name, target, probe.label, probe.text, ssh=ssh, shown=shown or probe.rest)

    def open(self, spec: SourceSpec, *, follow: bool, start: Any, **options: Any) -> Source:
        raise NotImplementedError

    def summarize(self, spec: SourceSpec, label: str, options: dict[str, Any]) -> Summary:
        """The whole source read once (``options``: ``workers``, ``duration``, SSH and metrics
        settings); :class:`SummaryError` when it cannot be read."""
        raise NotImplementedError

    def label(self, spec: SourceSpec) -> str:
        """A short pane label when none was given: the file name, host:file, cmd:PROGRAM."""
        return spec.name

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


class FileKind(SourceKind):
    """A local file, followed by name (it may appear later)."""

    name = "file"

    def parse(self, probe: Probe) -> SourceSpec | None:
        st = probe.st
        return self.spec(probe, probe.rest) if st is not None and stat.S_ISREG(st.st_mode) else None

    def open(self, spec: SourceSpec, *, follow: bool, start: Any, **options: Any) -> Source:
        from tui.core.sources.file import FileSource

        opts = {k: v for k, v in options.items() if k in _FOLLOW_OPTIONS}
        return FileSource(spec.target, spec.name, follow=follow, start=start, **opts)

    def summarize(self, spec: SourceSpec, label: str, options: dict[str, Any]) -> Summary:
        from tui.core.summary import summarize_file

        path = os.path.expanduser(spec.target)
        try:
            s = summarize_file(path, label, source=spec.target, workers=options.get("workers"))
        except OSError as exc:
            raise _read_error(spec.target, exc) from None
        return _attach_local_drafts(s)

    def label(self, spec: SourceSpec) -> str:
        return spec.name if spec.label or spec.config_name else _basename(spec.target)

    def where(self, spec: SourceSpec) -> str:
        return nice_path(spec.target)

    def location(self, spec: SourceSpec) -> str:
        return os.path.abspath(os.path.expanduser(spec.target))

    def local_path(self, spec: SourceSpec) -> str | None:
        return os.path.abspath(os.path.expanduser(spec.target))


def _basename(path: str) -> str:
    return os.path.basename(path.rstrip("/")) or path


class GlobKind(FileKind):
    """A pattern: live, the newest match is followed (switching when a newer one appears);
    ``summary`` reads the newest match, by modification time, as the live source starts
    with it. (To summarise every match, let the shell expand the pattern: one source each.)"""

    name = "glob"

    def parse(self, probe: Probe) -> SourceSpec | None:
        return self.spec(probe, probe.rest) if probe.st is None and has_magic(probe.rest) else None

    def open(self, spec: SourceSpec, *, follow: bool, start: Any, **options: Any) -> Source:
        from tui.core.sources.glob import GlobSource

        opts = {k: v for k, v in options.items() if k in _FOLLOW_OPTIONS}
        return GlobSource(spec.target, spec.name, follow=follow, start=start, **opts)

    def summarize(self, spec: SourceSpec, label: str, options: dict[str, Any]) -> Summary:
        from tui.core.summary import summarize_file

        path = self.whole_file(spec)
        if path is None:
            raise SummaryError(f"{spec.target}: no file matches")
        try:
            s = summarize_file(path, label, source=path, workers=options.get("workers"))
        except OSError as exc:
            raise _read_error(path, exc) from None
        return _attach_local_drafts(s)

    def where(self, spec: SourceSpec) -> str:
        return f"newest of {nice_path(spec.target)}"

    def location(self, spec: SourceSpec) -> str:
        return os.path.abspath(os.path.expanduser(spec.target))

    def local_path(self, spec: SourceSpec) -> str | None:
        return None

    def whole_file(self, spec: SourceSpec) -> str | None:
        return newest_match(spec.target)


def newest_match(pattern: str) -> str | None:
    """The regular file matching ``pattern`` with the newest modification time (ties: the
    greatest name), as :class:`tui.core.sources.glob.GlobSource` chooses it."""
    import glob

    pattern = os.path.expanduser(pattern)
    best: tuple[int, str] | None = None
    for path in glob.glob(pattern, recursive="**" in pattern):
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and (best is None or (st.st_mtime_ns, path) > best):
            best = (st.st_mtime_ns, path)
    return None if best is None else best[1]


class PipeKind(FileKind):
    """An existing local path that is not a regular file: a FIFO or character device such as
    ``<(kubectl logs -f pod)``, read as a stream to its end."""

    name = "pipe"

    def parse(self, probe: Probe) -> SourceSpec | None:
        st = probe.st
        if st is None or stat.S_ISREG(st.st_mode):
            return None
        if stat.S_ISDIR(st.st_mode):
            rest = probe.rest
            raise SourceSpecError(
                f"{rest} is a directory (give a file or a glob such as '{rest.rstrip('/')}/*.log')"
            )
        return self.spec(probe, probe.rest)

    def open(self, spec: SourceSpec, *, follow: bool, start: Any, **options: Any) -> Source:
        from tui.core.sources.stdin import open_pipe

        try:
            return open_pipe(os.path.expanduser(spec.target), spec.name, **_idle(options))
        except OSError as exc:
            raise SourceSpecError(f"cannot read {spec.target}: {exc.strerror or exc}") from None

    def summarize(self, spec: SourceSpec, label: str, options: dict[str, Any]) -> Summary:
        from tui.core.summary import summarize_stream

        try:
            with open(os.path.expanduser(spec.target), "rb") as f:
                s = summarize_stream(f, spec.target, label)
        except OSError as exc:
            raise _read_error(spec.target, exc) from None
        return _attach_local_drafts(s)

    def local_path(self, spec: SourceSpec) -> str | None:
        return None


class StdinKind(SourceKind):
    """``-``: standard input, read as it comes to its end."""

    name = "stdin"
    reads_stdin = True

    def parse(self, probe: Probe) -> SourceSpec | None:
        return self.spec(probe, "-", "stdin") if probe.rest == "-" else None

    def open(self, spec: SourceSpec, *, follow: bool, start: Any, **options: Any) -> Source:
        from tui.core.sources.stdin import stdin_source

        return stdin_source(spec.name, **_idle(options))

    def summarize(self, spec: SourceSpec, label: str, options: dict[str, Any]) -> Summary:
        from tui.core.summary import summarize_stream

        return _attach_local_drafts(summarize_stream(sys.stdin.buffer, "-", label))

    def where(self, spec: SourceSpec) -> str:
        return "standard input"


class CommandKind(SourceKind):
    """``cmd:COMMAND``: a shell command whose standard output is the log. ``summary`` runs it
    and reads its output to the end; a command that fails (exit status not 0) is an error
    naming the status and its last line on stderr."""

    name = "command"

    def parse(self, probe: Probe) -> SourceSpec | None:
        if not probe.rest.startswith("cmd:"):
            return None
        command = probe.rest[4:].strip()
        if not command:
            raise SourceSpecError(f"{probe.text}: cmd: needs a command, as in cmd:'kubectl logs -f POD'")
        return self.spec(probe, command, f"cmd:{command}")

    def open(self, spec: SourceSpec, *, follow: bool, start: Any, **options: Any) -> Source:
        from tui.core.sources.command import CommandSource

        return CommandSource(spec.target, spec.name, **_idle(options))

    def summarize(self, spec: SourceSpec, label: str, options: dict[str, Any]) -> Summary:
        import subprocess
        import tempfile

        from tui.core.summary import summarize_stream

        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(
                spec.target, shell=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err
            )
            assert proc.stdout is not None
            try:
                with proc.stdout:
                    s = summarize_stream(cast(BinaryIO, proc.stdout), spec.name, label)
            finally:
                code = proc.wait()
            if code != 0:
                err.seek(0)
                lines = [
                    ln for ln in err.read()[-4096:].decode("utf-8", "replace").splitlines() if ln.strip()
                ]
                said = f": {lines[-1].strip()}" if lines else ""
                raise SummaryError(f"{spec.name}: the command exited with status {code}{said}")
        return _attach_local_drafts(s)

    def label(self, spec: SourceSpec) -> str:
        if spec.label or spec.config_name:
            return spec.name
        words = spec.target.split()
        return "cmd:" + (words[0] if words else spec.target)

    def where(self, spec: SourceSpec) -> str:
        return f"$ {spec.target}"


_SCP_RX = re.compile(
    r"(?:(?P<user>[^@/:\s]+)@)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^@/:\s\[\]]+):(?P<path>.*)", re.S
)


class SshKind(SourceKind):
    """``ssh://[user@]host[:port]/path`` or ``[user@]host:path`` (scp style; a local path that
    exists wins): a remote file or glob, followed over one shared connection per host."""

    name = "ssh"
    schemes = ("ssh",)

    def parse(self, probe: Probe) -> SourceSpec | None:
        if probe.rest.startswith("ssh://"):
            return self._spec(probe, _parse_ssh_url(probe.text, probe.rest))
        if probe.st is not None:
            return None
        m = _SCP_RX.fullmatch(probe.rest)
        if m is None or not m.group("path"):
            return None
        return self._spec(probe, SshTarget(m.group("host").strip("[]"), m.group("path"), m.group("user")))

    def _spec(self, probe: Probe, target: SshTarget) -> SourceSpec:
        return self.spec(probe, target.path, ssh=target)

    def open(self, spec: SourceSpec, *, follow: bool, start: Any, **options: Any) -> Source:
        from tui.core.sources.ssh.source import open_ssh  # asyncssh is imported here, not before

        return open_ssh(spec, follow=follow, start=start, **options)

    def summarize(self, spec: SourceSpec, label: str, options: dict[str, Any]) -> Summary:
        from tui.core.sources.ssh.source import settings_from_options
        from tui.core.sources.ssh.summary import RemoteReadError, summarize_ssh

        assert spec.ssh is not None
        try:
            return summarize_ssh(spec.ssh, label, spec.text, settings_from_options(options))
        except RemoteReadError as exc:
            raise SummaryError(exc.message) from None

    def label(self, spec: SourceSpec) -> str:
        if spec.label or spec.config_name or spec.ssh is None:
            return spec.name
        return f"{spec.ssh.host}:{os.path.basename(spec.ssh.path)}"

    def where(self, spec: SourceSpec) -> str:
        if spec.ssh is None:
            return spec.target
        user = f"{spec.ssh.user}@" if spec.ssh.user else ""
        port = f":{spec.ssh.port}" if spec.ssh.port else ""
        return f"ssh {user}{spec.ssh.host}{port}:{spec.ssh.path}"

    def host(self, spec: SourceSpec) -> str | None:
        return spec.ssh.host if spec.ssh is not None else None


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


LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "")


class MetricsKind(SourceKind):
    """``metrics+http(s)://HOST:PORT/metrics`` and ``metrics+ssh://HOST/PORT``: a server's
    Prometheus endpoint, scraped (see :mod:`tui.core.sources.prom.scraper`). ``summary``
    scrapes for ``duration`` seconds (see :mod:`tui.core.metrics_summary`)."""

    name = "metrics"
    schemes = METRICS_SCHEMES

    def parse(self, probe: Probe) -> SourceSpec | None:
        from tui.core.sources.prom.scraper import parse_metrics_target

        scheme = probe.rest.partition("://")[0].lower()
        if scheme not in self.schemes:
            return None
        parse_metrics_target(probe.rest)  # a bad address is said now, before anything opens
        return SourceSpec(scheme, probe.rest, probe.label, probe.text, shown=probe.rest)

    def open(self, spec: SourceSpec, *, follow: bool, start: Any, **options: Any) -> Source:
        from tui.core.sources.prom.scraper import open_metrics

        return open_metrics(spec, follow=follow, start=start, **options)

    def summarize(self, spec: SourceSpec, label: str, options: dict[str, Any]) -> Summary:
        from tui.core.metrics_summary import DEFAULT_DURATION, summarize_metrics

        duration = options.get("duration")
        duration = DEFAULT_DURATION if duration is None else float(duration)
        if duration < 0:
            raise SummaryError("--duration takes a number of seconds ≥ 0")
        ms = summarize_metrics(spec, label, duration=duration, options=options)
        if ms.followed.error and not ms.stats.records and not (ms.source and ms.source.lifetime):
            raise SummaryError(ms.followed.error)
        return ms

    def host(self, spec: SourceSpec) -> str | None:
        from tui.core.sources.prom.scraper import parse_metrics_target

        host = parse_metrics_target(spec.target).host_label
        return None if host in LOCAL_HOSTS else host


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
