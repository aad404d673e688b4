"""Compressed logs over SSH (issue 22 item 4), against the real sshd of tests/conftest.py: the
compressed bytes travel, decompression is local, and ``summary host:/path.gz`` equals ``summary``
of the plain file read locally, for every sample log and every compression."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from _compress_util import COMPRESS, NAMED, ROOT, SAMPLES, without_names


def differences(a, b, at: str = "") -> list[str]:
    """Where two JSON values differ (for the failure message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [
            d
            for k in a.keys() | b.keys()
            if k not in NAMED
            for d in differences(a.get(k), b.get(k), f"{at}.{k}")
        ]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{at}[{i}]")]
    return [] if a == b else [f"{at}: {a!r} != {b!r}"]


def summary(home: Path, *sources: str, status: int = 0) -> list[dict]:
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("SSH_AUTH_SOCK", None)
    out = subprocess.run(
        [sys.executable, "-m", "tui", "summary", "--json", *sources],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert out.returncode == status, out.stderr
    return json.loads(out.stdout)["sources"]


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_every_compression_over_ssh_equals_the_plain_file(home, sshd, tmp_path, sample: Path) -> None:
    data = sample.read_bytes()
    remote = []
    for ext, compress in COMPRESS.items():
        p = tmp_path / f"{sample.name}.{ext}"
        p.write_bytes(compress(data))
        remote.append(p)
    plain, *got = summary(home, str(sample), *(f"logbox:{p}" for p in remote))
    assert plain["records"] > 0
    for p, src, kind in zip(remote, got, ("gzip", "bzip2", "xz", "zstd")):
        assert without_names(src) == without_names(plain), (p.name, differences(src, plain))
        f = src["files"][0]
        assert f["compression"] == kind and f["file_bytes"] == p.stat().st_size and f["bytes"] == len(data)


def test_a_random_binary_file_over_ssh_is_a_warning(home, sshd, tmp_path) -> None:
    junk = tmp_path / "core.dump"
    junk.write_bytes(random.Random(7).randbytes(32 << 10))
    (src,) = summary(home, f"logbox:{junk}", status=2)
    assert src["records"] == 0 and str(junk) in src["warnings"][0]
    assert "not a known compression" in src["warnings"][0]


def test_a_rotated_set_over_ssh_is_one_history(home, sshd, tmp_path) -> None:
    sample = ROOT / "sample_logs" / "sglang_eagle3_restart.log"
    lines = sample.read_bytes().splitlines(keepends=True)
    q = len(lines) // 4
    parts = [b"".join(lines[i * q : (i + 1) * q if i < 3 else len(lines)]) for i in range(4)]
    names = ["server.log-20261119.zst", "server.log.2.gz", "server.log.1", "server.log"]
    for name, part, w in zip(names, parts, (COMPRESS["zst"], COMPRESS["gz"], bytes, bytes)):
        (tmp_path / name).write_bytes(w(part))
    (tmp_path / "server.logger").write_text("another log\n")  # not of the set (--history leaves it out)
    plain, by_name = summary(home, str(sample), "--history", f"logbox:{tmp_path}/server.log")
    (tmp_path / "server.logger").unlink()  # a glob reads every match
    (by_glob,) = summary(home, f"logbox:{tmp_path}/server.log*")
    assert len(plain["segments"]) == 2
    for got in (by_name, by_glob):
        assert without_names(got) == without_names(plain), differences(got, plain)
        assert [f["path"] for f in got["files"]] == [f"logbox:{tmp_path}/{n}" for n in names]
