"""Compressed logs read transparently: gzip, bzip2 and xz with the standard library, zstd with
``zstandard``; recognised by their first bytes (:func:`sniff`), whatever the file is called.

Decompression is streamed in bounded pieces (:class:`Inflater`: at most :data:`OUT` bytes of
output per step, however well the input compresses), so a log is never held whole. Files made of
several concatenated streams (``cat a.gz b.gz``, ``pzstd``, ``pbzip2``) are read to their end.
A stream that ends early (a log being compressed while it is read) or holds corrupt bytes keeps
what was decompressed before, and says so in :attr:`Inflater.problem`.
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
    at most :data:`OUT` bytes (zstd: what :data:`ZSTD_IN` input bytes give)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._d = _new(kind)
        self._started = False  # the current stream has had input
        self.problem: str | None = None  # why decompression stopped early, if it did
        self.raw_bytes = 0

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self.problem is not None:
            return
        self.raw_bytes += len(data)
        try:
            yield from self._feed(data)
        except (zlib.error, OSError, lzma.LZMAError, EOFError, ValueError) as exc:
            self.problem = (
                f"corrupt {self.kind} data after {self.raw_bytes - len(data)} compressed bytes ({exc})"
            )
        except Exception as exc:  # zstandard.ZstdError
            if type(exc).__name__ != "ZstdError":
                raise
            self.problem = (
                f"corrupt {self.kind} data after {self.raw_bytes - len(data)} compressed bytes ({exc})"
            )

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
        if self.problem is None and self._started:
            self.problem = f"the {self.kind} data ends early (a truncated file?)"


class InflatingReader:
    """A binary file-like over a compressed file (``read`` only): its decompressed bytes."""

    def __init__(self, raw: BinaryIO, kind: str, read_size: int = 1 << 20) -> None:
        self.raw, self.kind = raw, kind
        self.inflater = Inflater(kind)
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
                self.inflater.finish()
                return False
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
