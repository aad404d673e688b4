"""``summary`` of local logs as people keep them: compressed files, a rotated set read oldest first
as one history, and a ``--since``/``--until`` window (:func:`summarize_paths`).

A single plain file goes through :func:`tui.core.pipeline.whole.summarize_file` (scanning threads
for large files; a window found by binary search, so only its bytes are read). Anything else is
one stream of bytes (:class:`tui.core.sources.logset.LogSet`: decompressed as it is read, a
newline between files that lack one) through one :class:`Summarizer`, so segments open where the
log shows a restart, never at a file boundary; a window cuts that stream as it goes
(:class:`tui.core.sources.window.Cutter`). The result says which files were read, in which
order (``files``), and the window (``window``).
"""

from __future__ import annotations

from functools import partial

from tui.core.pipeline.chunks import iter_chunks
from tui.core.pipeline.whole import CHUNK, Summarizer, summarize_file
from tui.core.sources.logset import LogSet
from tui.core.sources.window import Cutter, Window
from tui.core.sources.window_search import FileRange, find_range


def summarize_paths(
    paths: list[str],
    label: str | None,
    source: str,
    *,
    window: Window | None = None,
    workers: int | None = None,
) -> Summarizer:
    """``paths`` (oldest first) read whole as one log; raises OSError when one cannot be read."""
    logs = LogSet(paths)
    if len(paths) == 1 and not logs.compressed:
        found: list[FileRange] = []
        region = partial(_region, window, found) if window else None
        prefix = (lambda fd: found[0].prefix(fd)) if window else None
        s = summarize_file(paths[0], label, source=source, workers=workers, region=region, prefix=prefix)
        logs.members[0].bytes = s.bytes
        s.files = logs.files()
        _binary_check(logs, s)
        if window:
            s.window = {**window.to_dict(), **found[0].report()}
            s.input_warnings += [f"{source}: {found[0].warning}"] if found[0].warning else []
        return s
    s = Summarizer(source, label, ref_time=logs.mtime)
    cutter = Cutter(window, logs.mtime, context=True) if window else None
    try:
        s.read_chunks(iter_chunks(logs, CHUNK, on_oversized=s.skip_oversized), cutter)
    finally:
        logs.close()
    s.files = logs.files()
    s.input_warnings = logs.warnings()
    if window and cutter is not None:
        s.window = {**window.to_dict(), **cutter.report()}
    return s


def _region(
    window: Window, found: list[FileRange], fd: int, size: int, ref_time: float | None
) -> tuple[int, int]:
    rng = find_range(fd, size, window, ref_time)
    found.append(rng)
    return rng.lo, rng.hi


def _binary_check(logs: LogSet, s: Summarizer) -> None:
    import os

    from tui.core.sources.logset import looks_binary

    m = logs.members[0]
    try:
        fd = os.open(m.path, os.O_RDONLY)
        try:
            m.binary = looks_binary(os.pread(fd, 8192, 0))
        finally:
            os.close(fd)
    except OSError:
        return
    s.input_warnings = logs.warnings()
