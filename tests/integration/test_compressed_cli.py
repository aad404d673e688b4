"""Logs as people keep them (issue 22 items 4-6): ``summary`` of a gzip, bzip2, xz and zstd copy
of every sample log equals ``summary`` of the plain file; a file that is neither text nor a known
compression is a warning naming it; a rotated set of 4 files (two compressed) is one history;
a ``--since``/``--until`` window equals filtering the full read."""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path

import pytest
from _cli_util import run_cli
from _compress_util import COMPRESS, ROOT, SAMPLES, without_names


def summary(*args: str, ok: bool = True) -> dict:
    out = run_cli("summary", "--json", *args)
    assert out.returncode == (0 if ok else 2), out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_every_compression_of_every_sample_summarises_as_the_plain_file(sample: Path, tmp_path: Path) -> None:
    data = sample.read_bytes()
    copies = []
    for ext, compress in COMPRESS.items():
        # named without the usual suffix too: recognised by content, not by name
        copy = tmp_path / (f"{sample.stem}.{ext}" if ext != "zst" else f"{sample.stem}.old")
        copy.write_bytes(compress(data))
        copies.append(copy)
    got = summary(str(sample), *map(str, copies))
    plain, *rest = got["sources"]
    assert plain["records"] > 0 and plain["warnings"] == []
    assert plain["files"] == [
        {
            "path": str(sample),
            "compression": None,
            "file_bytes": len(data),
            "bytes": len(data),
            "problem": None,
        }
    ]
    for copy, src, kind in zip(copies, rest, ("gzip", "bzip2", "xz", "zstd")):
        assert without_names(src) == without_names(plain), copy.name
        assert src["files"][0]["compression"] == kind and src["files"][0]["path"] == str(copy)


def test_a_random_binary_file_is_a_warning_naming_it(tmp_path: Path) -> None:
    import random

    junk = tmp_path / "core.dump"
    junk.write_bytes(random.Random(22).randbytes(64 << 10))
    out = run_cli("summary", "--json", str(junk))
    assert out.returncode == 2
    src = json.loads(out.stdout)["sources"][0]
    assert src["records"] == 0
    assert (
        src["warnings"]
        and str(junk) in src["warnings"][0]
        and "not a known compression" in src["warnings"][0]
    )
    assert f"warning: {junk}" in out.stderr


def test_a_truncated_gzip_keeps_what_was_read_and_says_so(tmp_path: Path) -> None:
    sample = ROOT / "sample_logs" / "sglang_eagle3_restart.log"
    whole = gzip.compress(sample.read_bytes())
    cut = tmp_path / "server.log.1.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    src = summary(str(cut))["sources"][0]
    assert 0 < src["records"] and "ends early" in src["warnings"][0] and str(cut) in src["warnings"][0]
    assert src["files"][0]["problem"] and src["files"][0]["compression"] == "gzip"


def rotated_set(tmp_path: Path, text: bytes) -> list[Path]:
    """4 files of ``text``, oldest first: a dated zstd, a numbered gzip, .1 and the live file."""
    lines = text.splitlines(keepends=True)
    q = len(lines) // 4
    parts = [b"".join(lines[i * q : (i + 1) * q if i < 3 else len(lines)]) for i in range(4)]
    names = ["server.log-20261119.zst", "server.log.2.gz", "server.log.1", "server.log"]
    writers = [COMPRESS["zst"], COMPRESS["gz"], bytes, bytes]
    out = []
    for name, part, w in zip(names, parts, writers):
        (tmp_path / name).write_bytes(w(part))
        out.append(tmp_path / name)
    (tmp_path / "other.log").write_text("not part of the set\n")
    return out


def test_a_rotated_set_is_one_history_oldest_first(tmp_path: Path) -> None:
    sample = ROOT / "sample_logs" / "sglang_eagle3_restart.log"
    files = rotated_set(tmp_path, sample.read_bytes())
    whole = summary(str(sample))["sources"][0]
    assert len(whole["segments"]) == 2  # one restart in the log
    for args in (["--history", str(files[-1])], [str(tmp_path / "server.log*")]):
        got = summary(*args)["sources"][0]
        assert [f["path"] for f in got["files"]] == [str(f) for f in files]
        assert [f["compression"] for f in got["files"]] == ["zstd", "gzip", None, None]
        assert without_names(got) == without_names(whole)
    # stream follows a glob's newest match, as live; with --history it reads them all
    for args in (["--history", str(files[-1])], ["--history", str(tmp_path / "server.log*")]):
        out = run_cli("stream", "--jsonl", "--no-follow", *args)
        assert out.returncode == 0, out.stderr
        recs = [json.loads(x) for x in out.stdout.splitlines() if '"kind": "record"' in x]
        assert len(recs) == whole["records"] and {r["segment"] for r in recs} == {0, 1}


def test_files_without_a_last_newline_do_not_run_together(tmp_path: Path) -> None:
    line = "[2026-06-01 00:00:{:02d}] Decode batch, #running-req: 1, accept len: 2.50, accept rate: 0.50"
    (tmp_path / "s.log.1").write_bytes(gzip.compress(line.format(1).encode()))  # no newline at its end
    (tmp_path / "s.log").write_text(line.format(2) + "\n")
    got = summary("--history", str(tmp_path / "s.log"))["sources"][0]
    assert got["records"] == 2 and got["lines"] == 2


def _decode_log(path: Path, n: int) -> list[tuple[int, float]]:
    """``n`` SGLang decode lines a second apart, a traceback line without a stamp every 50."""
    rows = []
    with open(path, "w") as f:
        for i in range(n):
            al = 1 + (i * 7919 % 300) / 100
            f.write(
                f"[2026-06-01 {i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}] Decode batch, #running-req: 1, "
                f"accept len: {al:.2f}, accept rate: 0.50\n"
            )
            if i % 50 == 0:
                f.write('  File "x.py", line 1, in <module>\n')
            rows.append((i, round(al, 2)))
    return rows


@pytest.mark.parametrize("compressed", [False, True], ids=["plain (binary search)", "gzip (stream)"])
def test_a_window_equals_filtering_the_full_read(tmp_path: Path, compressed: bool) -> None:
    log = tmp_path / "w.log"
    rows = _decode_log(log, 20_000)
    if compressed:
        log.with_suffix(".gz").write_bytes(gzip.compress(log.read_bytes()))
        log = log.with_suffix(".gz")
    since, until = 5_000, 12_345  # seconds into the log
    stamp = lambda s: f"2026-06-01 {s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"  # noqa: E731
    got = summary("--since", stamp(since), "--until", stamp(until), str(log))["sources"][0]
    inside = [al for i, al in rows if since <= i < until]
    assert got["records"] == len(inside)
    assert got["accept_len"]["mean"] == pytest.approx(sum(inside) / len(inside), rel=1e-9)
    assert got["window"]["since"] == stamp(since) and got["window"]["until"] == stamp(until)
    assert got["window"]["search"] == ("stream" if compressed else "binary")
    assert got["window"]["skipped_bytes"] > 0
    # the lines of the window: its records and the unstamped lines that follow them
    assert got["lines"] == len(inside) + len([i for i in range(since, until) if i % 50 == 0])
    s = run_cli(
        "stream", "--jsonl", "--no-follow", "--since", stamp(since), "--until", stamp(until), str(log)
    )
    assert s.returncode == 0, s.stderr
    recs = [json.loads(x) for x in s.stdout.splitlines() if '"kind": "record"' in x]
    assert [r["accept_len"] for r in recs] == inside


def test_a_bad_time_is_one_line(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("x\n")
    out = run_cli("summary", "--since", "yesterday-ish", str(log))
    assert out.returncode != 0 and "is not a time" in out.stderr and "Traceback" not in out.stderr
    out = run_cli("stream", "--since=-2h", str(log))
    assert out.returncode != 0 and "need --no-follow" in out.stderr
    out = run_cli("stream", "--no-follow", "--since", "2h", "cmd:cat x")
    assert out.returncode != 0 and "read local files" in out.stderr


def test_compressed_stdin_and_command_output_are_read_decompressed(tmp_path: Path) -> None:
    sample = ROOT / "sample_logs" / "vllm_v1_eagle3.log"
    packed = tmp_path / "v.log.bz2"
    packed.write_bytes(bz2.compress(sample.read_bytes()))
    want = without_names(
        json.loads(run_cli("summary", "--json", "-", input=sample.read_bytes(), text=False).stdout)
    )
    got = json.loads(run_cli("summary", "--json", "-", input=packed.read_bytes(), text=False).stdout)
    assert without_names(got) == want and got["sources"][0]["records"] > 0
    cmd = json.loads(run_cli("summary", "--json", f"cmd:cat {packed}").stdout)
    assert without_names(cmd)["sources"][0]["records"] == want["sources"][0]["records"]
