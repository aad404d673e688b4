"""Files read as one log: a rotated set oldest first (or a single file), each plain or compressed,
their bytes one after the other (:class:`LogSet`). A file whose last line has no newline gets
one, so that its last line never runs into the next file's first.

``read`` goes through the set once, decompressing as it goes (bounded memory); ``pread`` serves
the replay, which reads forward and looks back a little (the last :data:`KEEP` bytes are kept; a
jump further back reads the set again from its start).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import BinaryIO

from tui.core.sources.compressed import SNIFF, InflatingReader, sniff

SNIFF_BYTES = 8192
NOT_TEXT_SHARE = 0.3  # a log with a few garbage bytes is still read as text
KEEP = 8 << 20
FIRST = 1 << 20  # a member's first (decompressed) bytes, read before any is handed out
BINARY_PROBLEM = "binary content in its first bytes: not read as a log"


def looks_binary(head: bytes) -> bool:
    """Whether the first bytes of a file look binary: NULs, control characters (other than tab,
    newline, CR, form feed, backspace, ESC) and bytes of invalid UTF-8 together make more than
    :data:`NOT_TEXT_SHARE` of them. False for no bytes."""
    head = head[:SNIFF_BYTES]
    if not head:
        return False
    controls = sum(1 for b in head if b < 32 and b not in b"\t\n\r\f\b\x1b")
    invalid = head.decode("utf-8", errors="replace").count("\ufffd") - head.count("\ufffd".encode())
    return (controls + invalid) / len(head) > NOT_TEXT_SHARE


@dataclass
class Member:
    """One file of the set, and what reading it found."""

    path: str
    compression: str | None  # gzip, bzip2, xz, zstd; None: read as it is
    raw_size: int
    mtime: float
    start: int = 0  # where its bytes begin in the set's
    bytes: int = 0  # its bytes in the set's (decompressed; with the newline added, if one was)
    binary: bool = False  # its first bytes (decompressed) do not look like text: not read further
    problem: str | None = None  # a compressed stream that is corrupt or ends early, binary content
    done: bool = False
    resumed: bool = False  # decoding went on after damage (a later zstd frame)

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "compression": self.compression,
            "file_bytes": self.raw_size,
            "bytes": self.bytes,
            "problem": self.problem or (BINARY_PROBLEM if self.binary else None),
        }

    def warnings(self) -> list[str]:
        out = []
        if self.binary and self.compression:
            out.append(f"{self.path} ({self.compression}) does not hold a text log (binary content)")
        elif self.binary:
            out.append(
                f"{self.path} does not look like a text log (binary content in its first bytes, "
                "and not a known compression: gzip, bzip2, xz, zstd)"
            )
        if self.problem and self.resumed:
            out.append(f"{self.path}: {self.problem}; the lines before the damage and after it were read")
        elif self.problem:
            out.append(f"{self.path}: {self.problem}; the lines before it were read")
        return out


def _open(path: str) -> tuple[BinaryIO, str | None, os.stat_result]:
    f = open(path, "rb")
    try:
        st = os.fstat(f.fileno())
        kind = sniff(os.pread(f.fileno(), SNIFF, 0)) if st.st_size else None
    except BaseException:
        f.close()
        raise
    return f, kind, st


class LogSet:
    """The files ``paths`` (oldest first) as one stream of bytes; raises OSError when one cannot
    be opened."""

    def __init__(self, paths: list[str], keep: int = 0) -> None:
        """``keep``: how many of the last bytes read to keep for :meth:`pread` to look back at."""
        self.keep = keep
        self.members: list[Member] = []
        for p in paths:
            f, kind, st = _open(p)
            f.close()
            self.members.append(Member(p, kind, st.st_size, st.st_mtime))
        self._rewind()

    @property
    def mtime(self) -> float | None:
        return max((m.mtime for m in self.members), default=None)

    @property
    def compressed(self) -> bool:
        return any(m.compression for m in self.members)

    @property
    def raw_size(self) -> int:
        return sum(m.raw_size for m in self.members)

    def _rewind(self) -> None:
        self._i = 0
        self._cur: BinaryIO | InflatingReader | None = None
        self._first: bytes | None = None  # the current member's first bytes, not all handed out yet
        self._last = b"\n"
        self.pos = 0
        self._keep = bytearray()  # the last bytes read, ending at pos
        self._keep_start = 0

    def warnings(self) -> list[str]:
        return [w for m in self.members for w in m.warnings()]

    def files(self) -> list[dict]:
        return [m.to_dict() for m in self.members]

    def raw_done(self) -> int:
        """Bytes of the files (as stored) read so far: for a progress bar."""
        done = sum(m.raw_size for m in self.members[: self._i])
        cur = self._cur
        if isinstance(cur, InflatingReader):
            done += cur.inflater.raw_bytes
        elif cur is not None:
            done += cur.tell()
        return done

    def _next_member(self) -> bool:
        if self._i >= len(self.members):
            return False
        m = self.members[self._i]
        f, kind, _ = _open(m.path)
        m.compression = kind
        self._cur = InflatingReader(f, kind) if kind else f
        self._first = None
        m.start, m.bytes, m.done = self.pos, 0, False
        return True

    def _end_member(self) -> bytes:
        m = self.members[self._i]
        cur = self._cur
        assert cur is not None
        if isinstance(cur, InflatingReader):
            m.problem = cur.problem
            m.resumed = bool(cur.inflater.resumed)
        cur.close()
        self._cur = None
        self._i += 1
        m.done = True
        if m.bytes and self._last != b"\n":
            m.bytes += 1
            self._last = b"\n"
            return b"\n"
        return b""

    def read(self, n: int = -1) -> bytes:
        """The next ``n`` bytes (fewer only at the end of the set; -1: all the rest)."""
        out = bytearray()
        while n < 0 or len(out) < n:
            if self._cur is None and not self._next_member():
                break
            assert self._cur is not None
            m = self.members[self._i]
            if self._first is None:  # a member's first megabyte decides whether it is text
                self._first = self._cur.read(FIRST)
                m.binary = looks_binary(self._first)
                if m.binary:  # not read further (a 10 GiB gzip of zeros is not decompressed)
                    self._first = None
                    out += self._end_member()
                    continue
            if self._first:
                want = len(self._first) if n < 0 else n - len(out)
                data, self._first = self._first[:want], self._first[want:]
            else:
                data = self._cur.read(1 << 20 if n < 0 else n - len(out))
            if not data:
                self._first = None
                out += self._end_member()
                continue
            m.bytes += len(data)
            self._last = data[-1:]
            out += data
        self.pos += len(out)
        if not self.keep:
            self._keep_start = self.pos
            return bytes(out)
        self._keep += out
        if len(self._keep) > self.keep:
            cut = len(self._keep) - self.keep
            del self._keep[:cut]
            self._keep_start += cut
        return bytes(out)

    def pread(self, n: int, offset: int) -> bytes:
        """``n`` bytes at ``offset`` of the set's bytes (fewer at its end)."""
        if offset < self._keep_start:
            self.close()
            self._rewind()
        if offset < self.pos:
            have = bytes(self._keep[offset - self._keep_start : offset - self._keep_start + n])
            return have + (self.read(n - len(have)) if len(have) < n else b"")
        while self.pos < offset:
            if not self.read(min(offset - self.pos, 1 << 20)):
                return b""
        return self.read(n)

    def close(self) -> None:
        if self._cur is not None:
            self._cur.close()
            self._cur = None
