"""Compressed logs read transparently: gzip, bzip2 and xz with the standard library, zstd with
``zstandard``; recognised by their first bytes (:func:`sniff`), whatever the file is called.

Decompression is streamed in bounded pieces (:class:`Inflater`: at most :data:`OUT` bytes of
output per step, however well the input compresses), so a log is never held whole. Files made of
several concatenated streams (``cat a.gz b.gz``, ``pzstd``, ``pbzip2``) are read to their end.
A stream that ends early (a log being compressed while it is read) or holds corrupt bytes keeps
what was decompressed before, and says so in :attr:`Inflater.problem`:

* the input goes to the decompressor in slices of :data:`STEP` compressed bytes, so damage costs
  at most the output of the slice it is in (every line decompressed before it is kept), and the
  problem names that slice's compressed byte offsets (where decoding failed: the damage is
  before its end, at most a block before for zstd and bzip2, whose blocks are checked whole);
* a zstd file of several frames (``pzstd``, ``zstd --long`` in chunks, concatenated files) goes
  on at the next frame after the damage (the next frame magic ``28 b5 2f fd``; a frame that does
  not decode is skipped in turn), and the problem says where decoding went on;
* with ``whole_lines`` (the file readers), the partial line the damage cut is not handed out
  (the lines before it are, and the lines of the next intact frame start on a line of their own).
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO

OUT = 1 << 20  # bytes of output per decompression step
ZSTD_IN = 1 << 16  # zstd's decompressor has no output limit: its input goes in these slices
SNIFF = 16
STEP = 4 << 10  # compressed bytes per decompression call: what damage can cost, at most
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

KINDS = ("gzip", "bzip2", "xz", "zstd")
SUFFIXES = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd", ".zstd": "zstd"}

_BZ2_BLOCK = (b"1AY&SY", b"\x17rE8P\x90")  # a first block, or the end of an empty stream


def sniff(head: bytes) -> str | None:
    """The compression of a file whose first bytes are ``head`` (at least :data:`SNIFF` of them
    when the file has as many), or None for anything else (text, unknown binary)."""
    if head[:3] == b"\x1f\x8b\x08":
        return "gzip"
    if head[:3] == b"BZh" and head[3:4] in b"123456789" and head[4:10] in _BZ2_BLOCK and len(head) >= 10:
        return "bzip2"
    if head[:6] == b"\xfd7zXZ\x00":
        return "xz"
    if head[:4] == b"\x28\xb5\x2f\xfd":
        return "zstd"
    return None


def sniff_file(path: str) -> str | None:
    with open(path, "rb") as f:
        return sniff(f.read(SNIFF))


class CompressionUnavailable(Exception):
    pass


def _new(kind: str) -> Any:
    if kind == "gzip":
        return zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    if kind == "bzip2":
        return bz2.BZ2Decompressor()
    if kind == "xz":
        return lzma.LZMADecompressor()
    try:
        import zstandard
    except ImportError:  # pragma: no cover - a declared dependency
        raise CompressionUnavailable("zstd needs the zstandard package (pip install zstandard)") from None
    return zstandard.ZstdDecompressor().decompressobj()


class Inflater:
    """One compressed stream, decompressed as its bytes are fed in (:meth:`feed`), in pieces of
    at most :data:`OUT` bytes (zstd: what :data:`ZSTD_IN` input bytes give). ``whole_lines``:
    hold back the bytes after the last newline until the next piece (or :meth:`take_tail`), so
    that damage can drop the line it cut (a held tail longer than :data:`OUT` is handed out)."""

    def __init__(self, kind: str, whole_lines: bool = False) -> None:
        self.kind = kind
        self._d = _new(kind)
        self._started = False  # the current stream has had input
        self.problem: str | None = None  # why decompression stopped early, if it did
        self.raw_bytes = 0
        self.whole_lines = whole_lines
        self._tail = b""  # whole_lines: the partial line held back
        self._seeking = False  # zstd: damaged, looking for the next frame
        self._stopped = False  # damaged, and nothing after it can be decoded (not zstd)
        self._carry = b""  # the last bytes of the input while seeking (a magic across two feeds)
        self.damage: list[tuple[int, int]] = []  # the compressed byte ranges that did not decode
        self.resumed: list[int] = []  # zstd: where decoding went on (compressed byte offsets)
        self.dropped = 0  # whole_lines: bytes of lines cut by damage, not handed out

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._stopped:  # decoding ended at damage (zstd goes on at its next frame instead)
            self.raw_bytes += len(data)
            return
        off = self.raw_bytes - len(self._carry)
        buf = self._carry + data if self._carry else data
        self._carry = b""
        self.raw_bytes += len(data)
        pos = 0
        while pos < len(buf):
            if self._seeking:
                k = buf.find(ZSTD_MAGIC, pos)
                if k < 0:
                    self._carry = buf[max(pos, len(buf) - len(ZSTD_MAGIC) + 1) :]
                    return
                self._seeking, pos = False, k
                self._d, self._started, self._full = _new(self.kind), False, False
                self.resumed.append(off + k)
                self._say()
            piece = buf[pos : pos + STEP]
            try:
                for out in self._feed(piece):
                    yield from self._lines(out)
            except Exception as exc:
                if not isinstance(exc, _ERRORS) and type(exc).__name__ != "ZstdError":
                    raise
                self._damaged(off + pos, off + pos + len(piece), exc)
                if self.kind != "zstd":
                    self._stopped = True
                    return
                self._seeking = True
                pos += 1  # the next frame starts after the damage
                continue
            pos += len(piece)

    def _lines(self, out: bytes) -> Iterator[bytes]:
        if not self.whole_lines:
            yield out
            return
        data = self._tail + out if self._tail else out
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) <= OUT:
            self._tail = data
            return
        if cut == 0:
            cut = len(data)
        self._tail = data[cut:]
        yield data[:cut]

    def _damaged(self, start: int, end: int, exc: Exception) -> None:
        if "incorrect data check" in str(exc) or "incorrect length check" in str(exc):
            # deflate has no check before the stream's end: the bytes handed out may be damaged
            self.damage.append((start, end))
            self.problem = (
                f"the {self.kind} checksum at the end of a stream (compressed bytes {start} to {end}) "
                "does not match: lines read from that stream may hold damaged bytes"
            )
            return
        self.damage.append((start, end))
        self.dropped += len(self._tail)
        self._tail = b""
        self._reason = str(exc)
        self._say()

    def _say(self) -> None:
        parts = []
        for i, (a, b) in enumerate(self.damage):
            text = f"corrupt {self.kind} data: decoding failed in compressed bytes {a} to {b}"
            if i == 0:
                text += f" ({self._reason})"
            if i < len(self.resumed):
                text += f", decoding went on at the next frame (compressed byte {self.resumed[i]})"
            parts.append(text)
        self.problem = "; ".join(parts)

    _reason = ""

    def _feed(self, data: bytes) -> Iterator[bytes]:
        while data or self._pending():
            if data and not self._started:
                self._started = True
            d = self._d
            if self.kind == "gzip":
                out = d.decompress(data, OUT)
                data = d.unconsumed_tail
                self._full = len(out) == OUT
            elif self.kind == "zstd":
                piece, data = data[:ZSTD_IN], data[ZSTD_IN:]
                out = d.decompress(piece)
                self._full = False
            else:
                out = d.decompress(data, OUT)
                data = b""
                self._full = not d.eof and not d.needs_input
            if out:
                yield out
            if d.eof:  # the stream ended: another may follow (concatenated files)
                rest = bytes(d.unused_data) + bytes(data)
                self._d, self._started, self._full = _new(self.kind), False, False
                if rest.strip(b"\x00"):
                    data = rest
                else:
                    return  # nothing, or the zero padding some tools leave at the end

    _full = False

    def _pending(self) -> bool:
        return self._full

    def finish(self) -> None:
        """At the end of the input: a stream that did not end is said in :attr:`problem`."""
        damaged = bool(self.damage)
        self.cut_at_end = self._seeking or self._started or (damaged and self.kind != "zstd")
        if self._seeking:
            self._seeking = False
            self.problem = f"{self.problem} (no intact frame after it)"
        elif not damaged and self._started:
            self.problem = f"the {self.kind} data ends early (a truncated file?)"
        elif damaged and self._started and self.kind == "zstd":
            self.problem = f"{self.problem}; the {self.kind} data ends early"

    cut_at_end = False  # the last stream did not end well (its last partial line is not handed out)

    def end(self) -> bytes:
        """At the end of the input (:meth:`finish` done here), with ``whole_lines``: the last line
        held back when its stream ended well; nothing when damage or the input's end cut it
        (its bytes counted in :attr:`dropped`)."""
        self.finish()
        tail = self.take_tail()
        if self.cut_at_end:  # a line the damage (or the file's end) cut
            self.dropped += len(tail)
            return b""
        return tail

    def take_tail(self) -> bytes:
        """whole_lines: the last line held back (at the end of a stream that ended well)."""
        tail, self._tail = self._tail, b""
        return tail


_ERRORS = (zlib.error, OSError, lzma.LZMAError, EOFError, ValueError)


class InflatingReader:
    """A binary file-like over a compressed file (``read`` only): its decompressed bytes."""

    def __init__(self, raw: BinaryIO, kind: str, read_size: int = 1 << 20) -> None:
        self.raw, self.kind = raw, kind
        self.inflater = Inflater(kind, whole_lines=True)
        self._buf = bytearray()
        self._pieces: Iterator[bytes] | None = None
        self._read_size = read_size
        self._eof = False
        self.pos = 0  # decompressed bytes handed out

    @property
    def problem(self) -> str | None:
        return self.inflater.problem

    def _more(self) -> bool:
        while True:
            if self._pieces is not None:
                piece = next(self._pieces, None)
                if piece is not None:
                    self._buf += piece
                    return True
                self._pieces = None
            if self._eof:
                return False
            data = self.raw.read(self._read_size)
            if not data:
                self._eof = True
                tail = self.inflater.end()
                self._buf += tail
                return bool(tail)
            self._pieces = self.inflater.feed(data)

    def read(self, n: int = -1) -> bytes:
        while (n < 0 or len(self._buf) < n) and self._more():
            pass
        if n < 0 or n >= len(self._buf):
            out = bytes(self._buf)
            self._buf.clear()
        else:
            out = bytes(self._buf[:n])
            del self._buf[:n]
        self.pos += len(out)
        return out

    def close(self) -> None:
        self.raw.close()


class _Prepended:
    """``head`` (bytes already read from ``f``), then the rest of ``f``."""

    def __init__(self, head: bytes, f: BinaryIO) -> None:
        self.head, self.f = head, f

    def read(self, n: int = -1) -> bytes:
        if self.head:
            out = self.head if n < 0 or n >= len(self.head) else self.head[:n]
            self.head = self.head[len(out) :]
            return out + (self.f.read(-1) if n < 0 else b"")
        return self.f.read(n)

    def close(self) -> None:
        self.f.close()


def decompressing(f: BinaryIO) -> tuple[Any, str | None]:
    """A stream (stdin, a pipe, a command's output) read as it is, or decompressed when its first
    bytes are a known compression's: (a reader with ``read``, the compression or None)."""
    head = f.read(SNIFF)
    kind = sniff(head)
    rest = _Prepended(head, f)
    return (InflatingReader(rest, kind) if kind else rest), kind  # type: ignore[arg-type]
