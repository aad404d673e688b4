"""Local kinds: a file, a glob, a pipe (FIFO or character device), stdin, and ``cmd:COMMAND``."""

from __future__ import annotations

import os
import stat
import sys
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from tui.core.sources.kinds.kind import (
    FOLLOW_OPTIONS,
    Probe,
    SourceKind,
    Summary,
    SummaryError,
    attach_local_drafts,
    idle_option,
    nice_path,
    read_error,
)
from tui.core.sources.target import SourceSpec, SourceSpecError, has_magic

if TYPE_CHECKING:
    from tui.core.sources.base import Source


class FileKind(SourceKind):
    """A local file, followed by name (it may appear later)."""

    name = "file"

    def parse(self, probe: Probe) -> SourceSpec | None:
        st = probe.st
        return self.spec(probe, probe.rest) if st is not None and stat.S_ISREG(st.st_mode) else None

    def open(self, spec: SourceSpec, *, follow: bool, start: Any, **options: Any) -> Source:
        from tui.core.sources.file import FileSource

        whole = _whole_read(
            spec, self.whole_files(spec, history=bool(options.get("history"))), follow, options
        )
        if whole is not None:
            return whole
        opts = {k: v for k, v in options.items() if k in FOLLOW_OPTIONS}
        return FileSource(spec.target, spec.name, follow=follow, start=start, **opts)

    def summarize(self, spec: SourceSpec, label: str, options: dict[str, Any]) -> Summary:
        paths = self.whole_files(spec, history=bool(options.get("history")))
        if not paths:
            raise SummaryError(f"{spec.target}: no file matches")
        return _summarize_paths(paths, label, spec.target, options)

    def whole_files(self, spec: SourceSpec, *, history: bool = False) -> list[str] | None:
        """The local files a whole read takes, oldest first: the file, or with ``history`` its
        rotated set (:func:`tui.core.sources.rotation.history_of`)."""
        path = os.path.expanduser(spec.target)
        if not history:
            return [path]
        from tui.core.sources.rotation import history_of

        return history_of(path)

    def label(self, spec: SourceSpec) -> str:
        return spec.name if spec.label or spec.config_name else _basename(spec.target)

    def label_path(self, spec: SourceSpec) -> str | None:
        return os.path.abspath(os.path.expanduser(spec.target))

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
    ``summary`` and ``replay`` read every match as one history, oldest first (a rotated set:
    :mod:`tui.core.sources.rotation`). (To summarise each match apart, let the shell expand the
    pattern: one source each.)"""

    name = "glob"

    def parse(self, probe: Probe) -> SourceSpec | None:
        return self.spec(probe, probe.rest) if probe.st is None and has_magic(probe.rest) else None

    def open(self, spec: SourceSpec, *, follow: bool, start: Any, **options: Any) -> Source:
        from tui.core.sources.glob import GlobSource

        if not follow and (options.get("window") or options.get("history")):
            whole = _whole_read(spec, self.whole_files(spec), follow, options)
            if whole is not None:
                return whole
        opts = {k: v for k, v in options.items() if k in FOLLOW_OPTIONS}
        return GlobSource(spec.target, spec.name, follow=follow, start=start, **opts)

    def whole_files(self, spec: SourceSpec, *, history: bool = False) -> list[str] | None:
        """Every regular file matching, oldest first as a rotated set
        (:func:`tui.core.sources.rotation.history_order`)."""
        from tui.core.sources.rotation import history_order

        found = matches(spec.target)
        return history_order(found) if found else None

    def where(self, spec: SourceSpec) -> str:
        return f"newest of {nice_path(spec.target)}"

    def location(self, spec: SourceSpec) -> str:
        return os.path.abspath(os.path.expanduser(spec.target))

    def local_path(self, spec: SourceSpec) -> str | None:
        return None

    def whole_file(self, spec: SourceSpec) -> str | None:
        return newest_match(spec.target)


def _whole_read(
    spec: SourceSpec, paths: list[str] | None, follow: bool, options: dict[str, Any]
) -> Source | None:
    """A compressed file, a rotated set or a ``--since``/``--until`` window: read whole, as fast
    as it comes (a replay without pacing), not followed (a compressed file does not grow); None
    for a plain file to follow."""
    from tui.core.sources.compressed import sniff_file

    window = options.get("window")
    if not paths:
        return None
    try:
        compressed = any(sniff_file(p) for p in paths)
    except OSError:
        return None
    if len(paths) == 1 and not compressed and not window and not options.get("history"):
        return None
    from tui.core.sources.replay import ReplaySource

    return ReplaySource(paths[-1], spec.name, speed=None, stay_open=follow, paths=paths, window=window)


def _summarize_paths(paths: list[str], label: str, source: str, options: dict[str, Any]) -> Summary:
    from tui.core.pipeline.whole_sets import summarize_paths

    try:
        s = summarize_paths(
            paths, label, source, window=options.get("window"), workers=options.get("workers")
        )
    except OSError as exc:
        raise read_error(getattr(exc, "filename", None) or source, exc) from None
    return attach_local_drafts(s)


def matches(pattern: str) -> list[str]:
    """The regular files matching ``pattern``."""
    import glob

    pattern = os.path.expanduser(pattern)
    out = []
    for path in glob.glob(pattern, recursive="**" in pattern):
        try:
            if stat.S_ISREG(os.stat(path).st_mode):
                out.append(path)
        except OSError:
            continue
    return out


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
            return open_pipe(os.path.expanduser(spec.target), spec.name, **idle_option(options))
        except OSError as exc:
            raise SourceSpecError(f"cannot read {spec.target}: {exc.strerror or exc}") from None

    def summarize(self, spec: SourceSpec, label: str, options: dict[str, Any]) -> Summary:
        from tui.core.pipeline.whole import summarize_stream

        try:
            with open(os.path.expanduser(spec.target), "rb") as f:
                s = summarize_stream(f, spec.target, label, window=options.get("window"))
        except OSError as exc:
            raise read_error(spec.target, exc) from None
        return attach_local_drafts(s)

    def local_path(self, spec: SourceSpec) -> str | None:
        return None

    def whole_files(self, spec: SourceSpec, *, history: bool = False) -> list[str] | None:
        return None


class StdinKind(SourceKind):
    """``-``: standard input, read as it comes to its end."""

    name = "stdin"
    reads_stdin = True

    def parse(self, probe: Probe) -> SourceSpec | None:
        return self.spec(probe, "-", "stdin") if probe.rest == "-" else None

    def open(self, spec: SourceSpec, *, follow: bool, start: Any, **options: Any) -> Source:
        from tui.core.sources.stdin import stdin_source

        return stdin_source(spec.name, **idle_option(options))

    def summarize(self, spec: SourceSpec, label: str, options: dict[str, Any]) -> Summary:
        from tui.core.pipeline.whole import summarize_stream

        return attach_local_drafts(
            summarize_stream(sys.stdin.buffer, "-", label, window=options.get("window"))
        )

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

        return CommandSource(spec.target, spec.name, **idle_option(options))

    def summarize(self, spec: SourceSpec, label: str, options: dict[str, Any]) -> Summary:
        import subprocess
        import tempfile

        from tui.core.pipeline.whole import summarize_stream

        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(
                spec.target, shell=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err
            )
            assert proc.stdout is not None
            try:
                with proc.stdout:
                    s = summarize_stream(
                        cast(BinaryIO, proc.stdout), spec.name, label, window=options.get("window")
                    )
            except BaseException:  # stopped by a signal: the command is not waited for to its end
                proc.kill()
                raise
            finally:
                code = proc.wait()
            if code != 0:
                err.seek(0)
                lines = [
                    ln for ln in err.read()[-4096:].decode("utf-8", "replace").splitlines() if ln.strip()
                ]
                said = f": {lines[-1].strip()}" if lines else ""
                raise SummaryError(f"{spec.name}: the command exited with status {code}{said}")
        return attach_local_drafts(s)

    def label(self, spec: SourceSpec) -> str:
        if spec.label or spec.config_name:
            return spec.name
        words = spec.target.split()
        return "cmd:" + (words[0] if words else spec.target)

    def where(self, spec: SourceSpec) -> str:
        return f"$ {spec.target}"
