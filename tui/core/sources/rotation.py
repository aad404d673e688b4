"""A rotated set of logs as one history: which files belong to a log (:func:`history_of`) and the
order they are read in, oldest first (:func:`history_order`).

Names are read as logrotate writes them, compressed or not (``.gz``, ``.bz2``, ``.xz``,
``.zst``): ``NAME-20261130`` (``dateext``; also ``NAME-2026-11-30``, ``NAME.20261130``, a time
after the date) ordered by date, then ``NAME.N`` in reverse (``.3`` before ``.2`` before ``.1``),
then ``NAME`` itself, the file written now. Files of different names (a glob's matches) are
ordered by name groups, the group whose newest file is oldest first.
"""

from __future__ import annotations

import os
import re
import stat

from tui.core.sources.compressed import SUFFIXES

_NUMBERED = re.compile(r"(?P<base>.+)\.(?P<n>\d{1,4})")
_DATED = re.compile(
    r"(?P<base>.+?)[-_.](?P<date>\d{4}-?\d\d-?\d\d)(?:[-_T]?(?P<time>\d\d(?:[:-]?\d\d){0,2}))?"
)


def strip_compression(name: str) -> str:
    for suffix in SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def rotation_key(path: str) -> tuple[str, int, tuple]:
    """(base name, rank, order within the rank): rank 0 dated copies, 1 numbered ones, 2 the
    live file."""
    directory, name = os.path.split(path)
    bare = strip_compression(name)
    m = _NUMBERED.fullmatch(bare)
    if m is not None:
        return os.path.join(directory, m.group("base")), 1, (-int(m.group("n")),)
    m = _DATED.fullmatch(bare)
    if m is not None:
        when = (m.group("date").replace("-", ""), re.sub(r"\D", "", m.group("time") or ""))
        return os.path.join(directory, m.group("base")), 0, when
    return os.path.join(directory, bare), 2, (name != bare,)


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def history_order(paths: list[str], mtimes: dict[str, float] | None = None) -> list[str]:
    """``paths`` oldest first (see the module's docstring); ``mtimes``: their modification times
    when they are not local files (else read here)."""
    mtime = mtimes.get if mtimes is not None else None
    groups: dict[str, list[tuple[tuple, str]]] = {}
    for p in paths:
        base, rank, within = rotation_key(p)
        groups.setdefault(base, []).append(((rank, within, p), p))
    ordered = []
    for base, members in groups.items():
        members.sort()
        newest = max((mtime(p, 0.0) if mtime else _mtime(p)) for _, p in members)
        ordered.append((newest, base, [p for _, p in members]))
    ordered.sort()
    return [p for _, _, members in ordered for p in members]


def history_of(path: str) -> list[str]:
    """The rotated set ``path`` is the newest file of (``path`` itself included, when it exists),
    oldest first."""
    path = os.path.expanduser(path)
    directory = os.path.dirname(path) or "."
    name = os.path.basename(path)
    try:
        entries = os.listdir(directory)
    except OSError:
        return [path]
    found = []
    for entry in entries:
        if not entry.startswith(name):
            continue
        full = os.path.join(directory, entry) if os.path.dirname(path) else entry
        base, _, _ = rotation_key(full)
        if (entry == name or base == os.path.join(os.path.dirname(path), name)) and _regular(full):
            found.append(full)
    return history_order(found) if found else [path]


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False
