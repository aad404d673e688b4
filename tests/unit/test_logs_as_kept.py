"""Compressed streams, rotated sets and time windows, piece by piece (issue 22 items 4-6)."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import random

import pytest
import zstandard

from tui.core.sources.compressed import OUT, Inflater, InflatingReader, sniff
from tui.core.sources.logset import LogSet, looks_binary
from tui.core.sources.rotation import history_of, history_order
from tui.core.sources.window import Cutter, Window, parse_when
from tui.core.sources.window_search import file_range

COMPRESS = {
    "gzip": gzip.compress,
    "bzip2": bz2.compress,
    "xz": lzma.compress,
    "zstd": lambda b: zstandard.ZstdCompressor().compress(b),
}
TEXT = b"".join(b"[2026-06-01 00:00:%02d] line %d\n" % (i % 60, i) for i in range(5000))


@pytest.mark.parametrize("kind", COMPRESS)
def test_sniffed_by_content_and_read_in_bounded_pieces(kind: str) -> None:
    packed = COMPRESS[kind](TEXT)
    assert sniff(packed[:16]) == kind
    inf = Inflater(kind)
    out = b"".join(piece for i in range(0, len(packed), 7) for piece in inf.feed(packed[i : i + 7]))
    inf.finish()
    assert out == TEXT and inf.problem is None


@pytest.mark.parametrize("kind", COMPRESS)
def test_concatenated_streams_are_read_to_their_end(kind: str) -> None:
    packed = COMPRESS[kind](TEXT) + COMPRESS[kind](b"tail\n")
    inf = Inflater(kind)
    assert b"".join(inf.feed(packed)) == TEXT + b"tail\n"
    inf.finish()
    assert inf.problem is None


def test_a_highly_compressible_stream_comes_out_in_pieces_of_at_most_out() -> None:
    packed = gzip.compress(b"x" * (8 * OUT))
    pieces = list(Inflater("gzip").feed(packed))
    assert len(pieces) >= 8 and max(map(len, pieces)) <= OUT


@pytest.mark.parametrize("kind", COMPRESS)
def test_a_cut_stream_keeps_what_came_and_says_it_ends_early(kind: str, tmp_path) -> None:
    packed = COMPRESS[kind](TEXT)
    p = tmp_path / "cut"
    p.write_bytes(packed[: len(packed) // 2])
    with open(p, "rb") as f:
        r = InflatingReader(f, kind)
        got = r.read()
    assert TEXT.startswith(got) and r.problem is not None
    assert "ends early" in r.problem or "corrupt" in r.problem


def test_corrupt_bytes_are_a_problem_not_an_exception() -> None:
    packed = bytearray(gzip.compress(TEXT))
    packed[40:60] = b"\xff" * 20
    inf = Inflater("gzip")
    list(inf.feed(bytes(packed)))
    assert inf.problem is not None and "corrupt gzip" in inf.problem


def test_text_and_random_bytes() -> None:
    assert sniff(b"[2026-06-01 00:00:00] x") is None
    assert sniff(b"BZh is a word\n") is None
    junk = random.Random(1).randbytes(4096)
    assert looks_binary(junk) and not looks_binary(TEXT[:4096])


def test_rotation_order_dated_then_numbered_in_reverse_then_the_live_file(tmp_path) -> None:
    names = [
        "server.log",
        "server.log.1",
        "server.log.2.gz",
        "server.log.10.xz",
        "server.log-20261130.zst",
        "server.log-20261129",
        "server.logger",  # another log
    ]
    for n in names:
        (tmp_path / n).write_bytes(b"x\n")
    got = [os.path.basename(p) for p in history_of(str(tmp_path / "server.log"))]
    assert got == [
        "server.log-20261129",
        "server.log-20261130.zst",
        "server.log.10.xz",
        "server.log.2.gz",
        "server.log.1",
        "server.log",
    ]
    os.utime(tmp_path / "server.logger", (1, 1))  # older than every file of server.log
    order = [os.path.basename(p) for p in history_order([str(tmp_path / n) for n in names])]
    assert order[0] == "server.logger" and order[1:] == got


def test_a_set_reads_as_one_stream_and_reads_back(tmp_path) -> None:
    (tmp_path / "a.1.gz").write_bytes(gzip.compress(b"one\ntwo"))  # no newline at the end
    (tmp_path / "a").write_bytes(b"three\n")
    s = LogSet([str(tmp_path / "a.1.gz"), str(tmp_path / "a")], keep=1 << 20)
    assert s.read(-1) == b"one\ntwo\nthree\n"
    assert s.pread(5, 4) == b"two\nt"  # from what was kept
    s.close()
    s2 = LogSet([str(tmp_path / "a.1.gz"), str(tmp_path / "a")])
    assert s2.pread(3, 8) == b"thr" and s2.pread(3, 0) == b"one"  # forward, then back to the start
    assert [m["bytes"] for m in s.files()] == [8, 6]


def test_times() -> None:
    assert parse_when("2026-11-30 14:00") == parse_when("2026-11-30T14:00:00")
    assert parse_when("2026-11-30") + 14 * 3600 == parse_when("2026-11-30 14:00")
    assert parse_when("-2h", now=10_000.0) == 10_000.0 - 7200 == parse_when("2h", now=10_000.0)
    assert parse_when("-1d12h", now=200_000.0) == 200_000.0 - 36 * 3600
    assert parse_when("14:30", now=86400 * 3 + 5) == 86400 * 3 + 14 * 3600 + 30 * 60
    for bad in ("yesterday", "2026-13-01", "25:00", "-"):
        with pytest.raises(ValueError):
            parse_when(bad)


def _log(n: int) -> bytes:
    out = [b"no stamp before the first one\n"]
    for i in range(n):
        out.append(b"[2026-06-01 %02d:%02d:%02d] r %d\n" % (i // 3600, i // 60 % 60, i % 60, i))
        if i % 7 == 0:
            out.append(b"  continuation\n")
    return b"".join(out)


@pytest.mark.parametrize(
    "since,until",
    [(100, 200), (None, 50), (3000, None), (0, 1), (4999, 6000), (7000, 8000), (None, None)],
)
def test_binary_search_and_stream_cut_agree(tmp_path, since, until) -> None:
    data = _log(5000)
    p = tmp_path / "w.log"
    p.write_bytes(data)
    base = parse_when("2026-06-01")
    w = Window(None if since is None else base + since, None if until is None else base + until)
    fd = os.open(p, os.O_RDONLY)
    try:
        lo, hi = file_range(fd, len(data), w, None)
    finally:
        os.close(fd)
    c = Cutter(w, None)
    kept = b"".join(c.cut(data[i : i + j], i) for i, j in _chunks(data))
    assert data[lo:hi] == kept
    if since is not None:
        assert data[lo:].startswith(b"[2026-06-01") or lo == len(data)
    if since is None and until is not None:
        assert kept.startswith(b"no stamp")


def _chunks(data: bytes):
    """(offset, length) of whole-line chunks of about 3000 bytes."""
    i = 0
    while i < len(data):
        j = data.find(b"\n", min(i + 3000, len(data) - 1)) + 1 or len(data)
        yield i, j - i
        i = j


# -- replay (and stream --no-follow) of a set, a compressed file, a window ----------------------------
T0 = "2026-01-02 03:04:"
REPLAYED = [
    f"[{T0}00] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', speculative_num_steps=3)",
    *(
        f"[{T0}{s:02d} TP0] Decode batch, #running-req: {s}, accept len: 2.00, accept rate: 0.50"
        for s in (1, 2)
    ),
    "a line without a timestamp",
    *(
        f"[{T0}{s:02d} TP0] Decode batch, #running-req: {s}, accept len: 2.00, accept rate: 0.50"
        for s in (5, 9)
    ),
    f"[{T0}10] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', speculative_num_steps=5)",
    *(
        f"[{T0}{s:02d} TP0] Decode batch, #running-req: {s}, accept len: 2.00, accept rate: 0.50"
        for s in (11, 12)
    ),
]


def _replay_set(tmp_path) -> list[str]:
    old, new = tmp_path / "r.log.1.xz", tmp_path / "r.log"
    old.write_bytes(lzma.compress("\n".join(REPLAYED[:4]).encode()))  # no newline at its end
    new.write_text("\n".join(REPLAYED[4:]) + "\n")
    return [str(old), str(new)]


@pytest.mark.parametrize(
    "since,until,want",
    [(None, None, REPLAYED), ("02", "11", REPLAYED[2:7]), ("06", None, REPLAYED[5:])],
)
async def test_replay_of_a_rotated_set_in_a_window(tmp_path, since, until, want) -> None:
    from _sources_util import Collector

    from tui.core.sources.replay import ReplaySource

    paths = _replay_set(tmp_path)
    w = Window(*(None if x is None else parse_when(f"2026-01-02 03:04:{x}") for x in (since, until)))
    src = ReplaySource(paths[-1], "r", speed=None, paths=paths, window=w or None)
    async with Collector(src) as c:
        await c.wait_for(lambda c: c.done, "the end of the replay")
        assert c.lines == want


async def test_replay_jumps_back_through_compressed_bytes(tmp_path) -> None:
    from _sources_util import Collector

    from tui.core.sources.base import EventKind
    from tui.core.sources.replay import ReplaySource

    paths = _replay_set(tmp_path)
    src = ReplaySource(paths[-1], "r", speed=None, paths=paths, stay_open=True)
    async with Collector(src) as c:
        await c.wait_for(lambda c: len(c.lines) == len(REPLAYED), "every line")
        c.items.clear()
        src.pause()
        src.seek(parse_when("2026-01-02 03:04:05"))  # back: from the start again, to the line at 5 s
        await c.wait_for(lambda c: len(c.lines) == 4, "the lines before 5 s, again")
        assert c.lines == REPLAYED[:4]
        assert any(getattr(b, "kind", None) == EventKind.SEEK and b.data["reset"] for b in c.items)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_window_read_by_scanning_threads_equals_filtering(tmp_path, monkeypatch, threads: int) -> None:
    """The window's bytes go to the scanning threads of large files as a whole file's would."""
    import tui.core.pipeline.whole as whole
    from tui.core.pipeline.whole_sets import summarize_paths

    monkeypatch.setattr(whole, "PARALLEL_MIN", 0)
    monkeypatch.setattr(whole, "CHUNK", 1 << 16)
    p = tmp_path / "big.log"
    rows = []
    with open(p, "w") as f:
        for i in range(30_000):
            al = 1 + (i * 7919 % 300) / 100
            f.write(
                f"[2026-06-01 {i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d} TP0] Decode batch, #running-req: 1, "
                f"#token: 10, token usage: 0.01, accept len: {al:.2f}, accept rate: 0.50, cuda graph: True, "
                "gen throughput (token/s): 10.00, #queue-req: 0\n"
            )
            rows.append((i, al))
    base = parse_when("2026-06-01")
    w = Window(base + 4321, base + 22_222)
    got = summarize_paths([str(p)], None, "big", window=w, workers=threads).result()
    inside = [al for i, al in rows if 4321 <= i < 22_222]
    assert got["records"] == len(inside) and got["window"]["search"] == "binary"
    assert got["accept_len"]["mean"] == pytest.approx(sum(inside) / len(inside), rel=1e-12)
