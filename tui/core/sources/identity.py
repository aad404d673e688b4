"""Is it still the same file? One decision for local and remote followers.

A follower that comes back to a file by name (after a reconnect, a retry, or a change it
noticed) knows the file's identity (``device:inode``), the byte offset it has read to, and a
:class:`Fingerprint` of the bytes it read: the first up to 4 KiB from where it started, and the
last up to 4 KiB before the offset. It gathers facts about what is there now (:class:`Look`:
the name's identity and size, whether those bytes are still the same; and, when the name
points at another file, where the old file went) and :func:`decide` says what to do:

* same identity, not shorter, same bytes: **resume** at the offset;
* same identity but shorter, or other bytes before the offset (copy-truncated and regrown,
  or deleted and recreated on a reused inode): **restart**, a ``truncated`` event;
* another identity: **rotated**. If the old file is still in the directory under another name
  (same identity, same bytes, not shorter) the rest of it is read first; otherwise the event
  says that what was written to it after the offset was not read.

Local followers compare bytes (``pread``); remote ones compare POSIX ``cksum`` values computed
on the host (:func:`cksum` is the same checksum here), so a check moves at most two short
lines over the network.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

WINDOW = 4096


def _crc_table() -> list[int]:
    table = []
    for i in range(256):
        c = i << 24
        for _ in range(8):
            c = ((c << 1) ^ 0x04C11DB7) if c & 0x80000000 else (c << 1)
        table.append(c & 0xFFFFFFFF)
    return table


_TABLE = _crc_table()


def cksum(data: bytes) -> int:
    """The POSIX ``cksum`` CRC of ``data`` (as ``cksum`` prints it, without the length)."""
    crc = 0
    t = _TABLE
    for b in data:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ t[(crc >> 24) ^ b]
    n = len(data)
    while n:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ t[(crc >> 24) ^ (n & 0xFF)]
        n >>= 8
    return ~crc & 0xFFFFFFFF


Range = tuple[int, int]  # (start, length)


class Fingerprint:
    """The bytes that identify what was read: up to :data:`WINDOW` bytes from where reading
    began (``head``) and the last up to :data:`WINDOW` bytes before the position (``tail``)."""

    __slots__ = ("base", "pos", "head", "tail")

    def __init__(self, pos: int = 0) -> None:
        self.reset(pos)

    def reset(self, pos: int = 0, head_at: int | None = None, head: bytes = b"", tail: bytes = b"") -> None:
        """Start again at ``pos``. A follower that starts in the middle of a file it can read
        (a local one) passes the bytes it has: ``head`` (from ``head_at``) and ``tail`` (before
        ``pos``); otherwise the fingerprint is made of the bytes fed from ``pos`` on."""
        self.base = pos if head_at is None else head_at
        self.head = head[:WINDOW]
        self.tail = tail[-WINDOW:]
        self.pos = pos

    def feed(self, data: bytes) -> None:
        if not data:
            return
        room = WINDOW - len(self.head)
        if room > 0 and self.base + len(self.head) == self.pos:
            self.head += data[:room]
        self.tail = data[-WINDOW:] if len(data) >= WINDOW else (self.tail + data)[-WINDOW:]
        self.pos += len(data)

    def ranges(self) -> list[Range]:
        """The byte ranges to look at again (none when nothing was read)."""
        out: list[Range] = []
        if self.head:
            out.append((self.base, len(self.head)))
        if self.tail and (self.pos - len(self.tail), len(self.tail)) not in out:
            out.append((self.pos - len(self.tail), len(self.tail)))
        return out

    def chunks(self) -> list[bytes]:
        """The bytes of each of :meth:`ranges`."""
        return [self._expected(r) for r in self.ranges()]

    def _expected(self, r: Range) -> bytes:
        return self.head if r == (self.base, len(self.head)) else self.tail

    def same_bytes(self, read: Callable[[int, int], bytes]) -> bool:
        """Whether ``read(start, length)`` gives back the same bytes for every range."""
        return all(read(start, n) == self._expected((start, n)) for start, n in self.ranges())

    def same_sums(self, sums: dict[Range, tuple[int, int]]) -> bool | None:
        """Whether the ``(cksum, length)`` found for each range match; None when one is missing
        (the host could not compute it)."""
        for r in self.ranges():
            got = sums.get(r)
            if got is None:
                return None
            expected = self._expected(r)
            if got[1] != len(expected) or got[0] != cksum(expected):
                return False
        return True


@dataclass(frozen=True, slots=True)
class FileLook:
    """A file as found now: its identity, size and whether the fingerprint's bytes match
    (None: not known)."""

    identity: str
    size: int
    same: bool | None
    name: str | None = None  # where it was found (for the old file: its new name)


@dataclass(frozen=True, slots=True)
class Look:
    """What is at the followed name now (None: nothing), and where the old file is (None: not
    found, or not looked for)."""

    at_name: FileLook | None
    old: FileLook | None = None
    copies: tuple[FileLook, ...] | None = None  # files that may be copies (None: not looked for)


@dataclass(frozen=True, slots=True)
class Decision:
    """``resume`` | ``restart`` | ``rotated`` | ``missing`` (nothing at the name). ``why``: a
    phrase for a restart (``"shrank to 10 bytes ..."``); for ``rotated`` and ``missing``:
    ``drain`` = (the old file's new name, from, to) when the rest of it can be read, and
    ``old_note``, what became of the old file."""

    action: str
    why: str = ""
    drain: tuple[str, int, int] | None = None
    drain_identity: str = ""  # the identity the file to drain must still have
    old_note: str = ""
    old_rest: str = ""  # "read" (to its end) | "drain" (the rest is read now) | "lost"
    rest_lines: int | None = None  # the lines the rest made, once it has been read


def decide(identity: str, pos: int, look: Look) -> Decision:
    """What to do with a file read to byte ``pos`` whose identity was ``identity``."""
    here = look.at_name
    if here is not None and here.identity == identity:
        if here.size < pos:
            why = f"shrank to {here.size} bytes (it was read to byte {pos})"
        elif here.same is False:
            why = f"was truncated and rewritten, or replaced on the same inode (its bytes before byte {pos} changed)"
        else:
            return Decision("resume")
        return copy_decision(why, pos, look.copies)
    action = "rotated" if here is not None else "missing"
    old = look.old
    if old is None or old.identity != identity or old.name is None:
        if action == "missing":
            return Decision(action)
        note = (
            f"the old file is gone (deleted, or moved out of the directory): whatever was written to it "
            f"after byte {pos} was not read"
        )
        return Decision(action, old_note=note, old_rest="lost")
    if old.size < pos or old.same is False:
        note = (
            f"the old file, now {old.name}, was truncated or rewritten: whatever was written to it after "
            f"byte {pos} was not read"
        )
        return Decision(action, old_note=note, old_rest="lost")
    if old.size > pos:
        note = drained_note(False, old.name, pos, old.size)
        return Decision(
            action, drain=(old.name, pos, old.size), drain_identity=identity, old_note=note, old_rest="drain"
        )
    return Decision(
        action, old_note=f"the old file, now {old.name}, had been read to its end", old_rest="read"
    )


def copy_decision(why: str, pos: int, copies: tuple[FileLook, ...] | None) -> Decision:
    """A file read to byte ``pos`` must be read again from its start (``why``): whether one of
    ``copies`` (None: not looked for) holds the old bytes and the rest of them (copytruncate)."""
    if copies is None or pos == 0:
        return Decision("restart", why)
    for c in copies:  # copytruncate: the old bytes are in the copy
        if c.same and c.size >= pos and c.name is not None:
            if c.size == pos:
                return Decision(
                    "restart", why, old_note=f"its copy {c.name} holds nothing more", old_rest="read"
                )
            note = drained_note(True, c.name, pos, c.size)
            return Decision("restart", why, (c.name, pos, c.size), c.identity, note, "drain")
    note = f"whatever was written to it after byte {pos} before that was not read (no copy of it found)"
    return Decision("restart", why, old_note=note, old_rest="lost")


def drained_note(copy: bool, name: str, start: int, end: int, lines: int | None = None) -> str:
    """What was read of an old file (``copy``: of a copy-truncated file's copy) under ``name``:
    bytes ``start`` to ``end``, and how many ``lines`` that made (when known)."""
    what = f"bytes {start} to {end}" + ("" if lines is None else f", {plural(lines, 'line')}")
    if copy:
        return f"read the rest of the old content from its copy {name} ({what}) first"
    return f"read the rest of the old file, now {name} ({what})"


def unread_note(start: int, end: int) -> str:
    """Bytes ``start`` to ``end`` of a copy-truncated file, seen in it but in no copy: not read."""
    return f"bytes {start} to {end} of the old content (seen before the truncation, in no copy) were not read"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")
