"""The one decision about "is it still the same file" (tui.core.sources.identity), and the local
follower obeying it: a file rewritten so that only its first bytes differ is noticed."""

from __future__ import annotations

import random
import subprocess

from _sources_util import FAST, Collector, append, seq, seq_lines

from tui.core.sources.base import EventKind as K
from tui.core.sources.file import FileSource
from tui.core.sources.identity import WINDOW, FileLook, Fingerprint, Look, cksum, decide


def test_cksum_is_the_posix_one():
    rng = random.Random(7)
    for n in (0, 1, 255, 256, 4096, 70000):
        data = rng.randbytes(n)
        out = subprocess.run(["cksum"], input=data, capture_output=True, check=True).stdout.split()
        assert (cksum(data), n) == (int(out[0]), int(out[1]))


def test_fingerprint_keeps_the_first_and_last_window_read():
    data = bytes(range(256)) * 100  # 25600 bytes
    fp = Fingerprint(0)
    for i in range(0, len(data), 1000):
        fp.feed(data[i : i + 1000])
    assert fp.pos == len(data)
    assert fp.ranges() == [(0, WINDOW), (len(data) - WINDOW, WINDOW)]
    assert fp.same_bytes(lambda a, n: data[a : a + n])
    changed = b"X" + data[1:]
    assert not fp.same_bytes(lambda a, n: changed[a : a + n])
    sums = {r: (cksum(data[r[0] : r[0] + r[1]]), r[1]) for r in fp.ranges()}
    assert fp.same_sums(sums) is True
    sums[(0, WINDOW)] = (cksum(changed[:WINDOW]), WINDOW)
    assert fp.same_sums(sums) is False
    assert fp.same_sums({}) is None  # the host could not say


def test_fingerprint_from_the_middle_and_small_files():
    fp = Fingerprint(500)  # read from byte 500 on (--from end), nothing known before it
    fp.feed(b"abc\n")
    assert fp.ranges() == [(500, 4)]
    fp = Fingerprint()
    fp.reset(10, 0, b"0123456789", b"0123456789")  # a local file read from byte 10: head grows on
    fp.feed(b"ab\n")
    assert fp.ranges() == [(0, 13)] and fp.head == b"0123456789ab\n"


def test_decisions():
    same = FileLook("1:5", 200, True)
    assert decide("1:5", 100, Look(same)).action == "resume"
    d = decide("1:5", 100, Look(FileLook("1:5", 50, None)))
    assert d.action == "restart" and "shrank to 50 bytes" in d.why
    d = decide("1:5", 100, Look(FileLook("1:5", 500, False)))
    assert d.action == "restart" and "bytes before byte 100 changed" in d.why
    new = FileLook("1:9", 30, False, "a.log")
    d = decide("1:5", 100, Look(new, FileLook("1:5", 180, True, "a.log.1")))
    assert (d.action, d.drain, d.old_rest) == ("rotated", ("a.log.1", 100, 180), "drain")
    assert "a.log.1 (bytes 100 to 180)" in d.old_note
    d = decide("1:5", 100, Look(new, FileLook("1:5", 100, True, "a.log.1")))
    assert (d.drain, d.old_rest) == (None, "read") and "read to its end" in d.old_note
    d = decide("1:5", 100, Look(new))
    assert d.old_rest == "lost" and "gone" in d.old_note and "after byte 100 was not read" in d.old_note
    d = decide("1:5", 100, Look(new, FileLook("1:5", 120, False, "a.log.1")))
    assert d.old_rest == "lost" and "a.log.1, was truncated or rewritten" in d.old_note
    assert decide("1:5", 100, Look(None)).action == "missing"
    d = decide("1:5", 100, Look(None, FileLook("1:5", 150, True, "a.log.1")))
    assert d.action == "missing" and d.drain == ("a.log.1", 100, 150)


async def test_local_rewrite_that_differs_only_in_its_first_line_is_a_truncation(tmp_path):
    """Same length, same last bytes, another first line: only the head check can tell."""
    p = tmp_path / "a.log"
    body = seq_lines(2, 400)
    append(p, "started run A\n" + body)
    async with Collector(FileSource(str(p), **dict(FAST, use_inotify=False, poll_interval=0.3))) as c:
        await c.wait_lines(400)
        with open(p, "r+") as f:  # between two looks
            f.write("started run B\n" + body + seq_lines(401, 402))
        await c.wait_lines(402 + 400)
    assert c.kinds == [K.OPENED, K.TRUNCATED]
    assert "bytes before byte" in c.events[1].message
    assert c.lines == ["started run A"] + [seq(i) for i in range(2, 401)] + ["started run B"] + [
        seq(i) for i in range(2, 403)
    ]


def test_copytruncate_decisions_look_at_the_copies():
    rewritten = FileLook("1:5", 500, False)
    assert decide("1:5", 100, Look(rewritten)).old_note == ""  # copies not looked for (local)
    d = decide("1:5", 100, Look(rewritten, None, ()))
    assert d.old_rest == "lost" and "no copy of it found" in d.old_note
    other = FileLook("1:7", 300, False, "a.log.2")
    copy = FileLook("1:8", 160, True, "a.log.1")
    d = decide("1:5", 100, Look(rewritten, None, (other, copy)))
    assert (d.action, d.drain, d.drain_identity, d.old_rest) == (
        "restart",
        ("a.log.1", 100, 160),
        "1:8",
        "drain",
    )
    d = decide("1:5", 100, Look(FileLook("1:5", 40, None), None, (FileLook("1:8", 100, True, "a.log.1"),)))
    assert d.action == "restart" and "shrank to 40" in d.why and d.old_rest == "read" and d.drain is None


def _verify(path, fp: Fingerprint, identity: str) -> list[str]:
    """The reader's header in mode verify, run with the local sh (as sshd would run it)."""
    from tui.core.sources.ssh.remote_side import parse_remote_path
    from tui.core.sources.ssh.scripts import expected_sums, reader_command

    cmd = reader_command(
        "TAG",
        "./",
        parse_remote_path(str(path)),
        path.name,
        expect=identity,
        offset=fp.pos,
        mode="verify",
        follow=False,
        sums=expected_sums(fp.chunks()),
        ranges=fp.ranges(),
    )
    out = subprocess.run(["sh", "-c", cmd], capture_output=True, check=False).stdout
    return out.split(b"\n", 1)[0].decode().split()[2:]


def test_remote_verify_resumes_only_on_the_same_bytes(tmp_path):
    p = tmp_path / "a.log"
    data = seq_lines(1, 1000).encode()
    p.write_bytes(data)
    # the identity as the host's stat gives it (device, inode, birth time)
    ident = subprocess.run(
        ["stat", "-L", "-c", "%d:%i:%.9W", str(p)], capture_output=True, text=True
    ).stdout.strip()
    fp = Fingerprint()
    fp.feed(data[:7000])
    assert _verify(p, fp, ident)[:5] == ["ok", ident, str(len(data)), "7000", "-"]  # at 7000
    with open(p, "r+b") as f:  # the first byte changed, nothing else
        f.write(b"L")
    assert _verify(p, fp, ident) == ["err", "moved"]
    p.write_bytes(data)
    assert _verify(p, fp, ident)[:4] == ["ok", ident, str(len(data)), "7000"]
    with open(p, "r+b") as f:  # a byte just before the offset
        f.seek(6990)
        f.write(b"X")
    assert _verify(p, fp, ident) == ["err", "moved"]
    assert _verify(p, fp, "1:2") == ["err", "moved"]  # another identity
    empty = Fingerprint()  # nothing read yet: identity and size decide
    assert _verify(p, empty, ident)[:4] == ["ok", ident, str(len(data)), "0"]
