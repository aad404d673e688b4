"""A log followed as a chain of generations, not as a name (one rule for local and SSH followers).

Each file the follower has read is a :class:`Gen`: its identity (``device:inode``), how far it was
read, the size it was last seen at, and its first bytes (up to :data:`.identity.WINDOW` from byte
0), by which it is known again once logrotate has compressed it under another inode. After a
rotation, and after every reconnect, the follower lists the rotated set (``NAME``, ``NAME.1``,
``NAME.2.gz``, dated names; :func:`.rotation.history_order` orders them) and :func:`plan` says
what to read, oldest first:

* a known generation not read to its end, wherever it now lives (``NAME.1``, ``NAME.2.gz``):
  the rest of it, from the byte it was read to;
* every generation newer than the newest known one that was never read: all of it;
* then the file at the name, followed.

and what is gone from disk: a known generation not read to its end that is no longer in the
set, and, in a numbered set, each number missing between the newest known generation and
``NAME.1`` (a generation rotated away and deleted unseen). Those are "lost", with a count, never
"read".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tui.core.sources.identity import plural
from tui.core.sources.rotation import rotation_key

MAX_CHAIN = 64  # generations remembered


@dataclass
class Gen:
    """One generation of the log: ``identity`` (``dev:ino``), read to byte ``pos`` (line
    ``line_no`` next), seen ``size`` bytes long (and modified at ``mtime``) at the last look,
    ``head``: its first bytes (from byte 0; empty when reading began later), ``closed``: read to
    its end after it was rotated away (a compressed copy of it then holds nothing new)."""

    identity: str
    pos: int = 0
    line_no: int = 1
    size: int = 0
    mtime: float = 0.0
    head: bytes = b""
    name: str = ""
    closed: bool = False


@dataclass(frozen=True)
class Listed:
    """A file of the rotated set as found now: ``name`` (in the directory), identity, size,
    mtime, compression (None: plain), ``same``: whether the bytes a known generation of this
    identity had (its fingerprint) are still there (None: not checked), ``head``: for a
    compressed file, its first decompressed bytes when they were fetched."""

    name: str
    identity: str
    size: int
    mtime: float
    compression: str | None = None
    same: bool | None = None
    head: bytes | None = None


@dataclass(frozen=True)
class Step:
    """Read ``name`` (identity, compression) from byte ``start`` (decompressed bytes for a
    compressed file) to its end; ``gen``: the known generation it continues (None: a new one);
    ``size``: its size as listed."""

    name: str
    identity: str
    start: int
    compression: str | None
    gen: Gen | None
    size: int = 0


@dataclass
class Plan:
    steps: list[Step] = field(default_factory=list)
    live: Listed | None = None  # the file at the name (None: nothing there now)
    lost: list[str] = field(default_factory=list)  # what is gone from disk, one phrase each
    lost_generations: int = 0  # whole generations gone unseen
    lost_known: list[Gen] = field(default_factory=list)  # known ones not read to their end, gone
    needs_heads: list[str] = field(default_factory=list)  # compressed names whose heads decide


def _number(name: str) -> int | None:
    _, rank, within = rotation_key(name)
    return -within[0] if rank == 1 else None


def plan(chain: list[Gen], listing: list[Listed], base: str, ordered: list[str]) -> Plan:
    """What to read after a rotation or a reconnect: ``chain`` the known generations (oldest
    first, the one read last at the end), ``listing`` the set's files, ``ordered`` their names
    oldest first, ``base`` the followed name."""
    by_name = {e.name: e for e in listing}
    known = {g.identity: g for g in chain}
    out = Plan(live=by_name.get(base))
    matched: dict[str, Gen] = {}  # name -> the known generation it is
    for e in listing:
        g = known.get(e.identity)
        if g is None:
            continue
        if e.compression is not None or (e.same is not False and e.size >= g.pos):
            matched[e.name] = g  # (a compressed file read part way is known by its identity)
    found = set(id(g) for g in matched.values())
    missing = [g for g in chain if id(g) not in found and not g.closed]
    newest_id = max((i for i, n in enumerate(ordered) if n in matched), default=-1)
    heads_needed = []
    copies: set[str] = set()  # compressed copies of a file still there (being compressed)
    for i, n in enumerate(ordered):  # a compressed file may be a known generation under a new inode
        e = by_name[n]
        if e.compression is None or n in matched or not (i > newest_id or missing):
            continue
        if e.head is None:
            heads_needed.append(n)
            continue
        for g in sorted(chain, key=lambda g: id(g) in found):  # a generation not found yet first
            if g.head and e.head.startswith(g.head):
                if id(g) in found:  # a compressed copy of a file found under its own inode
                    copies.add(n)
                else:
                    matched[n] = g
                    found.add(id(g))
                break
    if heads_needed:
        out.needs_heads = heads_needed
        return out
    newest_known = max((i for i, n in enumerate(ordered) if n in matched), default=None)
    last = chain[-1] if chain else None
    for i, n in enumerate(ordered):
        e = by_name[n]
        g = matched.get(n)
        if (n == base and (g is None or g is last)) or n in copies:
            continue  # the live file: followed, not a step (or a copy of a file read under its name)
        if g is not None:
            if g.closed and e.compression is not None:
                continue
            if e.compression is None and e.size <= g.pos:
                continue
            out.steps.append(Step(n, e.identity, g.pos, e.compression, g, e.size))
        elif newest_known is not None and i > newest_known:
            out.steps.append(Step(n, e.identity, 0, e.compression, None, e.size))
        elif newest_known is None and last is not None and last.mtime > 0 and e.mtime >= last.mtime:
            out.steps.append(Step(n, e.identity, 0, e.compression, None, e.size))
    for g in chain:
        if id(g) not in found and not g.closed:
            out.lost_known.append(g)
            seen = f" (it was at least {g.size} bytes long)" if g.size > g.pos else ""
            out.lost.append(
                f"{g.name or 'the old file'}, read to byte {g.pos}{seen}, is gone from disk: "
                f"what followed byte {g.pos} in it was not read"
            )
    if newest_known is not None:
        k = _number(ordered[newest_known])
        if k is not None:
            have = {_number(n) for n in ordered[newest_known + 1 :]}
            gone = [j for j in range(k - 1, 0, -1) if j not in have]
            if gone:
                out.lost_generations += len(gone)
                names = ", ".join(f"{base}.{j}" for j in gone)
                out.lost.append(
                    f"{plural(len(gone), 'generation')} rotated away and deleted unseen "
                    f"(no {names} between {ordered[newest_known]} and {base})"
                )
    return out


def remember(chain: list[Gen], g: Gen) -> None:
    """``g`` becomes the newest generation of ``chain`` (the oldest are forgotten)."""
    if g in chain:
        chain.remove(g)
    chain.append(g)
    del chain[:-MAX_CHAIN]


SHOWN = 6  # files of a catch-up named one by one in its event (all of them are in its data)


def read_phrase(notes: list[str], lines: int) -> str:
    """What a catch-up read, for its event: each file's :func:`read_note`, oldest first; after a
    storm of rotations (tens of files) the first three and the last two, and the count."""
    what = f"{plural(len(notes), 'file')} of the rotated set"
    listed = ", ".join(notes)
    if len(notes) > SHOWN:
        what += f" ({plural(lines, 'line')} in all)"
        listed = ", ".join(notes[:3]) + f", … {len(notes) - 5} more …, " + ", ".join(notes[-2:])
    return f"then read what was left in {what}, oldest first: {listed}"


def read_note(path: str, start: int, end: int, lines: int, compression: str | None) -> str:
    what = f"{compression}, " if compression else ""
    return f"{path} ({what}bytes {start} to {end}, {plural(lines, 'line')})"
