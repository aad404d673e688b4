"""The script that reads one file of a rotated set over SSH (``scripts.GEN``), run with the local
``sh`` as sshd would run it: the file listed is read wherever a rotation renamed it since (a
higher number, the same compression, no shorter), and nothing else is taken for it."""

from __future__ import annotations

import gzip
import os
import subprocess

import pytest

from tui.core.sources.ssh.remote_side import parse_remote_path
from tui.core.sources.ssh.scripts import gen_command


def ident(p) -> str:
    return subprocess.run(
        ["stat", "-L", "-c", "%d:%i:%.9W", str(p)], capture_output=True, text=True
    ).stdout.strip()


def gen(d, name: str, listed: tuple[str, int] | None, offset: int = 0) -> tuple[list[str], bytes]:
    cmd = gen_command("TAG", parse_remote_path(str(d / "srv.log")), name, offset, 0, listed)
    out = subprocess.run(["sh", "-c", cmd], capture_output=True, check=False).stdout
    head, _, body = out.partition(b"\n")
    return head.decode().split()[2:], body


def test_a_file_renamed_by_rotations_since_the_listing_is_read_where_it_is_now(tmp_path):
    (tmp_path / "srv.log").write_bytes(b"new\n")
    (tmp_path / "srv.log.3").write_bytes(b"old one\n")
    i = ident(tmp_path / "srv.log.3")
    assert gen(tmp_path, "srv.log.1", (i, 8), 4) == (["ok", i, "8", ".3"], b"one\n")  # listed as .1
    assert gen(tmp_path, "srv.log.3", (i, 8)) == (["ok", i, "8"], b"old one\n")  # where it was listed
    assert gen(tmp_path, "srv.log", (i, 8)) == (["ok", i, "8", ".3"], b"old one\n")  # listed at the name


def test_nothing_a_rotation_cannot_have_made_is_taken_for_the_file(tmp_path):
    (tmp_path / "srv.log.1").write_bytes(b"one\n")
    (tmp_path / "srv.log.4.gz").write_bytes(gzip.compress(b"four\n"))
    one, four = ident(tmp_path / "srv.log.1"), ident(tmp_path / "srv.log.4.gz")
    # a lower number (rotations only raise it): the file now at the name listed is said, not read as it
    assert gen(tmp_path, "srv.log.2", (one, 4)) == (["err", "enoent"], b"")
    (tmp_path / "srv.log.2").write_bytes(b"two\n")
    assert gen(tmp_path, "srv.log.2", (one, 4))[0] == ["ok", ident(tmp_path / "srv.log.2"), "4"]
    # another compression suffix, or shorter than listed
    assert gen(tmp_path, "srv.log.2", (four, 10)) == (["ok", ident(tmp_path / "srv.log.2"), "4"], b"two\n")
    assert gen(tmp_path, "srv.log.2.gz", (four, 9999)) == (["err", "enoent"], b"")
    assert gen(tmp_path, "srv.log.2.gz", (four, 10))[0] == [
        "ok",
        four,
        str(os.path.getsize(tmp_path / "srv.log.4.gz")),
        ".4.gz",
    ]
    # no identity given: the name only
    assert gen(tmp_path, "srv.log.9", None) == (["err", "enoent"], b"")


def test_the_identity_tells_a_new_file_on_a_reused_inode_apart(tmp_path):
    """Device and inode alone repeat when a file is deleted and the next one created gets its inode
    (logrotate: .2 gzipped and deleted, then the new srv.log; ext4 does so at once); the birth
    time does not."""
    p = tmp_path / "srv.log.1"
    p.write_bytes(b"a\n")
    before = ident(p)
    ino = os.stat(p).st_ino
    for _ in range(200):  # until the file system hands the same inode out again
        p.unlink()
        p.write_bytes(b"b\n")
        if os.stat(p).st_ino == ino:
            break
    else:
        pytest.skip("this file system does not hand a freed inode out again at once (tmpfs)")
    if before.split(":")[2].strip("0.") in ("", "-", "?"):
        pytest.skip("this stat or file system does not know birth times")
    now = ident(p)
    assert now.split(":")[:2] == before.split(":")[:2] and now != before
    assert gen(tmp_path, "srv.log.1", (before, 2))[0] == ["ok", now, "2"]  # said as another file
