"""The labels of sources shown together (pure: strings in, strings out).

A source's label is the one given (``label=SOURCE``, a config name) or its kind's short name (the
file name, ``host:file``, ``cmd:PROGRAM``). When two sources shown together would get the same
label, each takes the shortest suffix of its path that tells it from the others
(``blue/server.log``, ``green/server.log``; ``gpu1:…/blue/server.log`` for remote files); a label
that was given is never changed, and what no path tells apart (the same file twice, two commands)
is numbered (``cmd:python (2)``). Every output that names sources (the panes, the B − A bar,
``summary``, ``stream``, ``export``, the CSV) takes its labels from :func:`distinct_labels`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

ELLIPSIS = "…"


@dataclass(frozen=True, slots=True)
class Named:
    """One source as :func:`distinct_labels` sees it: ``label``, its default or given label;
    ``fixed``, given by the user (never changed); ``path``, the file it reads (absolute for a
    local one, as given for a remote one); ``host``, the machine of a remote file."""

    label: str
    fixed: bool = False
    path: str | None = None
    host: str | None = None


def _parts(path: str) -> list[str]:
    return path.rstrip("/").split("/") if path.rstrip("/") else [path]


def _suffix(item: Named, depth: int) -> str:
    """``item``'s label from the last ``depth`` parts of its path (the whole path when that is
    all of it)."""
    assert item.path is not None
    parts = _parts(item.path)
    whole = depth >= len(parts)
    text = "/".join(parts[-depth:]) if not whole else item.path.rstrip("/") or item.path
    if item.host is not None:
        return f"{item.host}:{text}" if whole else f"{item.host}:{ELLIPSIS}/{text}"
    return text


def numbered(labels: Sequence[str]) -> list[str]:
    """Labels still alike numbered from the second on (``server.log (2)``)."""
    seen: dict[str, int] = {}
    out = []
    for lab in labels:
        seen[lab] = seen.get(lab, 0) + 1
        out.append(lab if seen[lab] == 1 else f"{lab} ({seen[lab]})")
    return out


def distinct_labels(items: Sequence[Named]) -> list[str]:
    """One label per item, all different: alike ones (not given ones) lengthened to the shortest
    path suffix that no other alike one shares (the same file twice is not told apart by its
    path), then what is still alike numbered. A suffix of one depth never equals one of another
    depth, so lengthened labels stay apart."""
    labels = [it.label for it in items]
    counts = Counter(labels)
    for i, it in enumerate(items):
        if it.fixed or it.path is None or counts[it.label] < 2:
            continue
        mine = _parts(it.path)
        others = [
            _parts(o.path)
            for j, o in enumerate(items)
            if j != i and o.label == it.label and o.path is not None and _parts(o.path) != mine
        ]
        for depth in range(2, len(mine) + 1):
            if all(other[-depth:] != mine[-depth:] for other in others):
                labels[i] = _suffix(it, depth)
                break
    return numbered(labels)
