"""Damaged compressed files keep what they can (issue 29 item 5): every line decompressed before
the damage, the next intact frame of a multi-frame zstd file, true byte offsets in the warning,
and binary content called binary from the first decompressed megabyte (a member of a set says
so in ``files[].problem``). The files are generated here, a few hundred KB each."""

from __future__ import annotations

import bz2
import gzip
import lzma
import random
import re
import zlib

import pytest
import zstandard

from tui.core.sources import logset
from tui.core.sources.compressed import InflatingReader
from tui.core.sources.logset import FIRST, LogSet

LINES = [
    f"[2026-06-01 00:00:00] line {i:06d} payload {random.Random(i).getrandbits(64):016x}\n"
    for i in range(8000)
]
TEXT = "".join(LINES).encode()
PACK = {
    "zstd": lambda b: zstandard.ZstdCompressor(level=3).compress(b),
    "xz": lzma.compress,
    "bzip2": lambda b: bz2.compress(b, 1),  # 100 kB blocks: damage costs one
    "gzip": gzip.compress,
}


def damaged(data: bytes, at: int, n: int = 64) -> bytes:
    b = bytearray(data)
    b[at : at + n] = bytes(n)
    return bytes(b)


def read(path) -> tuple[list[str], LogSet]:
    s = LogSet([str(path)])
    out = s.read(-1)
    s.close()
    return out.decode().splitlines(keepends=True), s


def streaming_reference(kind: str, data: bytes) -> int:
    """The whole lines a decoder fed one byte at a time hands out before it fails: the most a
    streaming reader can keep."""
    d = {
        "zstd": lambda: zstandard.ZstdDecompressor().decompressobj(),
        "xz": lzma.LZMADecompressor,
        "bzip2": bz2.BZ2Decompressor,
        "gzip": lambda: zlib.decompressobj(wbits=31),
    }[kind]()
    out = bytearray()
    try:
        for i in range(len(data)):
            out += d.decompress(data[i : i + 1])
    except Exception:
        pass
    return out.count(b"\n")


def offsets(warning: str) -> tuple[int, int]:
    m = re.search(r"compressed bytes (\d+) to (\d+)", warning)
    assert m is not None, warning
    return int(m.group(1)), int(m.group(2))


@pytest.mark.parametrize("kind", ["zstd", "xz", "bzip2"])
def test_damage_mid_file_keeps_every_line_before_it(kind: str, tmp_path) -> None:
    packed = PACK[kind](TEXT)
    at = len(packed) * 3 // 4
    bad = damaged(packed, at)
    p = tmp_path / f"server.log.1.{kind}"
    p.write_bytes(bad)
    kept, s = read(p)
    ref = streaming_reference(kind, bad)
    assert kept == LINES[: len(kept)]  # exactly the original's first lines, none cut
    # what a byte-at-a-time decoder recovers, less at most one input slice's worth
    assert ref > 0 and len(kept) >= ref - 400, (len(kept), ref)
    (w,) = s.warnings()
    _, b = offsets(w)
    assert at < b and str(p) in w and "the lines before it were read" in w


def test_a_damaged_zstd_frame_is_skipped_and_the_next_frames_kept(tmp_path) -> None:
    q = len(LINES) // 4
    frames = [LINES[i * q : (i + 1) * q] for i in range(4)]
    packed = [PACK["zstd"]("".join(f).encode()) for f in frames]
    at = len(packed[1]) // 2
    packed[1] = damaged(packed[1], at)
    p = tmp_path / "server.log.2.zst"
    p.write_bytes(b"".join(packed))
    kept, s = read(p)
    n1 = len(frames[0])
    middle = kept[n1 : len(kept) - 2 * q]
    assert kept[:n1] == frames[0] and kept[len(kept) - 2 * q :] == frames[2] + frames[3]
    assert middle == frames[1][: len(middle)]  # frame 2's lines before the damage, none cut
    (w,) = s.warnings()
    _, b = offsets(w)
    assert len(packed[0]) + at < b
    assert f"went on at the next frame (compressed byte {len(packed[0]) + len(packed[1])})" in w
    assert "before the damage and after it were read" in w


def test_a_cut_gzip_keeps_its_whole_lines_and_a_damaged_one_says_its_lines_may_be_damaged(tmp_path) -> None:
    packed = PACK["gzip"](TEXT)
    cut = tmp_path / "cut.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    kept, s = read(cut)
    assert 0 < len(kept) and kept == LINES[: len(kept)]
    assert len(kept) >= streaming_reference("gzip", packed[: len(packed) // 2]) - 400
    assert "ends early" in s.warnings()[0]
    # deflate has no check before the end: damage that decodes is only found by the checksum
    bad = tmp_path / "bad.gz"
    bad.write_bytes(packed[:-8] + bytes(8))
    _, s = read(bad)
    assert "may hold damaged bytes" in s.warnings()[0]


def test_binary_content_is_called_binary_from_its_first_megabyte(tmp_path, monkeypatch) -> None:
    readers: list[InflatingReader] = []

    class Spy(InflatingReader):
        def __init__(self, *a, **k) -> None:
            super().__init__(*a, **k)
            readers.append(self)

    monkeypatch.setattr(logset, "InflatingReader", Spy)
    (tmp_path / "server.log.1.gz").write_bytes(gzip.compress(bytes(64 << 20), 1))  # 64 MiB of zeros
    (tmp_path / "server.log").write_bytes(TEXT)
    s = LogSet([str(tmp_path / "server.log.1.gz"), str(tmp_path / "server.log")])
    assert s.read(-1) == TEXT
    assert readers[0].pos <= FIRST  # not decompressed past the first megabyte
    first, live = s.files()
    assert first["bytes"] == 0 and first["problem"] and "binary" in first["problem"]
    assert live["problem"] is None
    assert "does not hold a text log" in s.warnings()[0]


@pytest.mark.parametrize("step", [1 << 20, 32768, 4096, 1000])
def test_the_frames_after_a_resync_are_kept_however_the_input_is_fed(step: int) -> None:
    """The bytes fed after the feed where decoding went on at the next frame are decoded too
    (they were dropped: a remote file arrives in 32 KiB pieces, a large local one in 1 MiB reads)."""
    from tui.core.sources.compressed import Inflater

    q = len(LINES) // 4
    frames = [LINES[i * q : (i + 1) * q] for i in range(4)]
    packed = [PACK["zstd"]("".join(f).encode()) for f in frames]
    packed[1] = damaged(packed[1], len(packed[1]) // 2)
    data = b"".join(packed)
    inf = Inflater("zstd", whole_lines=True)
    out = b"".join(o for i in range(0, len(data), step) for o in inf.feed(data[i : i + step])) + inf.end()
    kept = out.decode().splitlines(keepends=True)
    assert kept[:q] == frames[0] and kept[len(kept) - 2 * q :] == frames[2] + frames[3]
    assert kept[q : len(kept) - 2 * q] == frames[1][: len(kept) - 3 * q]
    assert inf.resumed and "ends early" not in (inf.problem or "")
