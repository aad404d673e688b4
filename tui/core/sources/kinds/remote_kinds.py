"""Remote kinds: SSH files and globs, and Prometheus metrics endpoints."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tui.core.sources.kinds.kind import Probe, SourceKind, Summary, SummaryError
from tui.core.sources.target import METRICS_SCHEMES, SourceSpec, SourceSpecError, SshTarget

if TYPE_CHECKING:
    from tui.core.sources.base import Source


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
        from tui.core.sources.kinds.remote_whole import summarize_ssh
        from tui.core.sources.ssh.source import settings_from_options
        from tui.core.sources.ssh.whole import RemoteReadError

        assert spec.ssh is not None
        try:
            return summarize_ssh(
                spec.ssh,
                label,
                spec.text,
                settings_from_options(options),
                options.get("window"),
                bool(options.get("history")),
            )
        except RemoteReadError as exc:
            raise SummaryError(exc.message) from None

    def label(self, spec: SourceSpec) -> str:
        if spec.label or spec.config_name or spec.ssh is None:
            return spec.name
        return f"{spec.ssh.host}:{os.path.basename(spec.ssh.path)}"

    def label_path(self, spec: SourceSpec) -> str | None:
        return spec.ssh.path if spec.ssh is not None else None

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
    scrapes for ``duration`` seconds (see :mod:`tui.core.pipeline.whole_metrics`)."""

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
        from tui.core.pipeline.whole_metrics import DEFAULT_DURATION, summarize_metrics

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
