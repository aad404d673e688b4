"""Time windows with their context (issue 31 item 3) and clocks that go back (issue 29 item 4):
the window carries the config of the segment open at its start, and a plain file whose clock is
not monotonic is read in order, as the same file compressed is."""

from __future__ import annotations

import gzip
import os

import pytest

import tui.core.pipeline.whole as whole
from tui.core.pipeline.whole_sets import summarize_paths
from tui.core.sources.window import Cutter, Window, parse_when
from tui.core.sources.window_search import find_range

ARGS = (
    "server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', speculative_num_steps={k}, "
    "speculative_eagle_topk=1, speculative_num_draft_tokens={n})"
)


def _rec(stamp: str, al: float = 2.0) -> str:
    return (
        f"[{stamp} TP0] Decode batch, #running-req: 1, #token: 10, token usage: 0.01, accept len: {al:.2f}, "
        "accept rate: 0.50, cuda graph: True, gen throughput (token/s): 10.00, #queue-req: 0"
    )


def _hour(h: int, step: int = 2) -> list[str]:
    return [_rec(f"2026-06-01 {h:02d}:{s // 60:02d}:{s % 60:02d}") for s in range(0, 3600, step)]


def _write(tmp_path, name: str, rows: list[str]) -> tuple[str, str]:
    data = ("\n".join(rows) + "\n").encode()
    plain, packed = tmp_path / name, tmp_path / (name + ".gz")
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    return str(plain), str(packed)


def _window(since: str | None, until: str | None) -> Window:
    return Window(*(None if t is None else parse_when(f"2026-06-01 {t}") for t in (since, until)))


def test_a_clock_that_goes_back_is_read_in_order_plain_and_compressed_agree(tmp_path) -> None:
    """09:00-09:59, then 08:00-08:59, then 10:00-10:59 (the issue's file): the window is from the
    first line stamped at or after --since to the first one after it at or after --until, read
    in order; the binary search alone found a third of it."""
    plain, packed = _write(tmp_path, "back.log", [*_hour(9), *_hour(8), *_hour(10)])
    w = _window("08:30", "10:30")
    got = [summarize_paths([p], None, "back", window=w) for p in (plain, packed)]
    records = [s.result()["records"] for s in got]
    assert records == [1800 + 1800 + 900] * 2  # from the first line (09:00) to 10:30
    assert [s.window["search"] for s in got] == ["in order", "stream"]
    assert any("clock goes back" in x for x in got[0].input_warnings)
    assert not got[1].input_warnings
    fd = os.open(plain, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        monotonic = find_range(fd, size, _window("09:30", None), None)
    finally:
        os.close(fd)
    assert monotonic.search == "in order"  # the premise is the file's, not the window's


def test_a_monotonic_clock_keeps_the_binary_search(tmp_path) -> None:
    plain, _ = _write(tmp_path, "fwd.log", [*_hour(8), *_hour(9), *_hour(10)])
    s = summarize_paths([plain], None, "fwd", window=_window("08:30", "10:30"))
    assert s.window["search"] == "binary" and s.result()["records"] == 3600
    assert s.window["log_first"] == "2026-06-01 08:00:00" and s.window["log_last"] == "2026-06-01 10:59:58"


def test_a_chunk_where_the_clock_goes_back_is_read_line_by_line() -> None:
    """A chunk whose last stamp is before --since but whose first is not holds the window's start."""
    rows = [_rec("2026-06-01 09:00:00"), _rec("2026-06-01 09:00:01"), _rec("2026-06-01 08:00:00")]
    buf = ("\n".join(rows) + "\n").encode()
    c = Cutter(_window("08:30", None), None)
    assert c.cut(buf, 0) == buf


def _two_segments() -> list[str]:
    return [
        "[2026-06-01 08:00:00] " + ARGS.format(k=3, n=4),
        "[2026-06-01 08:00:00] a startup line",
        *_hour(8),
        "[2026-06-01 09:00:00] " + ARGS.format(k=5, n=6),
        *_hour(9),
    ]


@pytest.mark.parametrize("threads", [0, 2])
@pytest.mark.parametrize(
    "since,configs,records",
    [
        ("08:30", ["EAGLE3 steps=3 topk=1 ndt=4", "EAGLE3 steps=5 topk=1 ndt=6"], 900 + 1800),
        ("09:30", ["EAGLE3 steps=5 topk=1 ndt=6"], 900),
    ],
)
def test_a_window_carries_the_config_of_its_first_segment(
    tmp_path, monkeypatch, threads, since, configs, records
) -> None:
    if threads:  # the scanning threads' path of large files
        monkeypatch.setattr(whole, "PARALLEL_MIN", 0)
        monkeypatch.setattr(whole, "CHUNK", 1 << 16)
    plain, packed = _write(tmp_path, "two.log", _two_segments())
    for path in (plain, packed):
        d = summarize_paths(
            [path], None, "two", window=_window(since, None), workers=threads or None
        ).result()
        assert [seg["config"]["label"] for seg in d["segments"]] == configs, path
        assert [seg["reason"] for seg in d["segments"]] == ["server_args"] * len(configs)
        assert d["records"] == records
        assert d["window"]["context_bytes"] > 0


def test_a_window_before_the_first_restart_has_no_context(tmp_path) -> None:
    plain, packed = _write(tmp_path, "until.log", _two_segments())
    for path in (plain, packed):
        d = summarize_paths([path], None, "u", window=_window(None, "08:30")).result()
        assert d["window"]["context_bytes"] == 0 and d["records"] == 900
        assert d["segments"][0]["config"]["label"] == "EAGLE3 steps=3 topk=1 ndt=4"


@pytest.mark.parametrize("step", [1 << 20, 4096, 600])
def test_the_startup_block_is_found_however_far_back_and_whatever_the_steps(
    tmp_path, monkeypatch, step
) -> None:
    """Read back in steps smaller than the block and than the distance to it: the same block."""
    import tui.core.sources.window_context as wc

    monkeypatch.setattr(wc, "CONTEXT_STEP", step)
    dump = [f"[2026-06-01 09:00:00] args line {i} of the startup" for i in range(40)]
    rows = [*_hour(8), "[2026-06-01 09:00:00] " + ARGS.format(k=5, n=6), *dump, *_hour(9)]
    plain, _ = _write(tmp_path, "far.log", rows)
    data = open(plain, "rb").read()
    start = data.index(b"server_args=") - len(b"[2026-06-01 09:00:00] ")
    end = data.index(b"Decode batch", start)
    end = data.rfind(b"\n", 0, end) + 1
    fd = os.open(plain, os.O_RDONLY)
    try:
        rng = find_range(fd, len(data), _window("09:30", None), None)
    finally:
        os.close(fd)
    assert rng.context == (start, end)
    d = summarize_paths([plain], None, "far", window=_window("09:30", None)).result()
    assert [seg["config"]["label"] for seg in d["segments"]] == ["EAGLE3 steps=5 topk=1 ndt=6"]


@pytest.mark.parametrize("chunk", [600, 5000, 1 << 20])
def test_a_stream_cut_in_any_chunks_keeps_the_same_startup_block(chunk) -> None:
    rows = [
        *_hour(8),
        "[2026-06-01 09:00:00] " + ARGS.format(k=5, n=6),
        "  a wrapped line of the dump",
        *_hour(9),
    ]
    data = ("\n".join(rows) + "\n").encode()
    start = data.index(b"[2026-06-01 09:00:00] server_args=")
    end = data.rfind(b"\n", 0, data.index(b"Decode batch", start)) + 1
    c = Cutter(_window("09:30", None), None, context=True)
    out, pos = b"", 0
    while pos < len(data):
        nl = data.find(b"\n", min(pos + chunk, len(data) - 1)) + 1 or len(data)
        out += c.cut(data[pos:nl], pos)
        pos = nl
    assert c.context_bytes == end - start
    assert out[: c.context_bytes] == data[start:end]
    assert out[c.context_bytes :] == data[data.index(b"[2026-06-01 09:30:00") :]


def test_stamps_a_second_out_of_order_keep_the_binary_search_and_agree(tmp_path) -> None:
    """Two processes writing one log: a second out of order here and there is no clock going back,
    and the edges are where reading in order puts them."""
    rows = []
    for s in range(0, 7200):
        h, m, sec = 8 + s // 3600, s // 60 % 60, s % 60
        rows.append(_rec(f"2026-06-01 {h:02d}:{m:02d}:{sec:02d}"))
        if s % 3 == 0 and s:
            p = s - 1
            rows.append(
                _rec(f"2026-06-01 {8 + p // 3600:02d}:{p // 60 % 60:02d}:{p % 60:02d}")
            )  # a second late
    plain, packed = _write(tmp_path, "jitter.log", rows)
    for since, until in (("08:30:01", "09:15:01"), ("08:30:00", "09:15:00"), ("08:59:59", None)):
        w = _window(since, until)
        got = [summarize_paths([p], None, "j", window=w) for p in (plain, packed)]
        assert got[0].window["search"] == "binary" and not got[0].input_warnings
        assert got[0].result()["records"] == got[1].result()["records"], (since, until)
        assert got[0].result()["lines"] == got[1].result()["lines"]
