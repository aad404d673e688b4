"""File changes and network faults against Debian's OpenSSH sshd on 127.0.0.1 (started here, as
in test_ssh_sshd.py; with CI=true a missing sshd fails): {connected, disconnected} x {append,
copytruncate + regrow, rename + create, delete + recreate, newer glob match}, with
sequence-numbered lines: every line arrives exactly once and in order, except the lines each
case names, which existed only in a file that is gone. Then a TCP black hole (a loopback proxy
that stops forwarding) and the copy-truncate-while-the-server-is-down acceptance run."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from inspect import signature
from pathlib import Path

import pytest
from _sources_util import Collector, append, seq, seq_lines
from _ssh_util import FAST_SSH, BlackHoleProxy, user_home
from _wait import wait_until

from tui.core.sources.base import EventKind as K
from tui.core.sources.spec import parse_source_spec
from tui.core.sources.ssh.connect import SshSettings
from tui.core.sources.ssh.source import SshSource


@pytest.fixture
def running(sshd):
    """The server is running after the test whatever happened in it."""
    yield sshd
    if sshd.proc is None:
        sshd.start()


def remote(path, alias: str = "logbox") -> SshSource:
    spec = parse_source_spec(f"{alias}:{path}")
    assert spec.ssh is not None
    return SshSource(spec.ssh, "remote", settings=SshSettings(**FAST_SSH), idle_after=None)


def evs(c: Collector, kind: K) -> list:
    return [e for e in c.events if e.kind == kind]


def new(i: int) -> str:
    return f"new {i:05d}"


def new_lines(a: int, b: int) -> str:
    return "".join(new(i) + "\n" for i in range(a, b + 1))


LAST = "the last line"


async def drained(c: Collector, live: Path) -> None:
    """Nothing more is still to come: a last line written to the file being followed, after
    everything else, has arrived (the lines of a source come in order), instead of a quiet time
    that a busy machine may outlast. The tests then expect ``LAST`` as the last line."""
    append(live, LAST + "\n")
    await c.wait_for(lambda c: LAST in c.lines, "the last line")


class Seen:
    """What a fault, run in a thread, waits for before its next step: ``n`` lines arrived, or an
    event of ``kind`` (the collector's lists are read from the fault's thread)."""

    def __init__(self, c: Collector) -> None:
        self.c = c

    def lines(self, n: int) -> None:
        wait_until(lambda: len(self.c.lines) >= n, what=f"{n} lines", show=lambda: self.c.stream()[-20:])

    def event(self, kind: K, count: int = 1) -> None:
        wait_until(
            lambda: self.c.kinds.count(kind) >= count,
            what=f"{count} x {kind.value}",
            show=lambda: self.c.stream()[-20:],
        )


# -- the faults ------------------------------------------------------------------------------------
# Each takes the directory and the followed file (holding lines 1-100, all received) and returns
# (the lines expected after 1-100, the lines lost with why, the file that goes on being written).
# A fault that waits for the source between its steps takes a fourth argument, a :class:`Seen`.
Fault = Callable[..., tuple[list[str], dict[str, str], Path]]


def run_fault(fault: Fault, d: Path, p: Path, connected: bool, seen: Seen):
    if len(signature(fault).parameters) > 3:
        return fault(d, p, connected, seen)
    return fault(d, p, connected)


def f_append(d: Path, p: Path, connected: bool):
    append(p, seq_lines(101, 200))
    return [seq(i) for i in range(101, 201)], {}, p


def f_copytruncate(d: Path, p: Path, connected: bool, seen: Seen):
    append(p, seq_lines(101, 150))
    if connected:
        seen.lines(150)  # read live before the copy
    shutil.copy(p, d / "a.log.1")
    os.truncate(p, 0)
    if connected:
        seen.event(K.TRUNCATED)  # the shrink noticed (docs/sources.md: tail notices one in 50 ms)
    append(p, new_lines(1, 400))  # past the old offset
    # disconnected: 101-150 are read from the copy a.log.1, then the new content
    return [seq(i) for i in range(101, 151)] + [new(i) for i in range(1, 401)], {}, p


def f_rename_create(d: Path, p: Path, connected: bool):
    append(p, seq_lines(101, 150))
    old = d / "a.log.1"
    with open(p, "a") as writer:  # the program's descriptor stays on the renamed file
        os.rename(p, old)
        writer.write(seq_lines(151, 160))
    append(p, new_lines(1, 100))
    return [seq(i) for i in range(101, 161)] + [new(i) for i in range(1, 101)], {}, p


def f_delete_recreate(d: Path, p: Path, connected: bool, seen: Seen):
    append(p, seq_lines(101, 150))
    if connected:
        seen.lines(150)  # the live tail reads them before the file goes
    p.unlink()
    if connected:
        seen.event(K.WAITING)  # the name's absence noticed ("removed or renamed; waiting ...")
    append(p, new_lines(1, 100))
    if connected:
        return [seq(i) for i in range(101, 151)] + [new(i) for i in range(1, 101)], {}, p
    lost = {seq(i): "written to a.log after the disconnect, then a.log was deleted" for i in range(101, 151)}
    return [new(i) for i in range(1, 101)], lost, p


def f_newer_match(d: Path, p: Path, connected: bool):
    append(p, seq_lines(101, 150))
    b = d / "b.log"
    append(b, new_lines(1, 100))
    t = time.time() + 2
    os.utime(b, (t, t))
    return [seq(i) for i in range(101, 151)] + [new(i) for i in range(1, 101)], {}, b


FAULTS = {
    "append": f_append,
    "copytruncate": f_copytruncate,
    "rename": f_rename_create,
    "delete": f_delete_recreate,
    "newer-glob-match": f_newer_match,
}
EVENT = {
    "append": None,
    "copytruncate": {K.TRUNCATED},
    "rename": {K.ROTATED},
    "delete": {K.ROTATED, K.TRUNCATED},  # TRUNCATED when the new file got the old inode number
    "newer-glob-match": {K.SWITCHED},
}


@pytest.mark.parametrize("connected", [True, False], ids=["connected", "disconnected"])
@pytest.mark.parametrize("fault", list(FAULTS))
async def test_fault_every_line_exactly_once(home, running, tmp_path, fault, connected):
    sshd = running
    d = tmp_path / "logs"
    d.mkdir()
    p = d / "a.log"
    append(p, seq_lines(1, 100))
    glob = fault == "newer-glob-match"
    src = remote(f"{d}/*.log" if glob else p)
    async with Collector(src) as c:
        await c.wait_lines(100)
        if not connected:
            sshd.kill()
            await c.wait_event(K.RECONNECTING)
        want, lost, live = await asyncio.to_thread(run_fault, FAULTS[fault], d, p, connected, Seen(c))
        tries = c.kinds.count(K.RECONNECTING)
        if not connected:
            await c.wait_event(K.RECONNECTING, tries + 1)  # one more attempt while down, after the change
            sshd.start()
            await c.wait_event(K.CONNECTED, 2)
        await c.wait_lines(100 + len(want))
        append(live, "".join(f"after {i}\n" for i in range(20)))
        want = want + [f"after {i}" for i in range(20)]
        await c.wait_lines(100 + len(want))
        await drained(c, live)  # nothing more may come
    want.append(LAST)
    assert c.lines == [seq(i) for i in range(1, 101)] + want, sorted(set(c.lines) & set(lost))
    assert not set(c.lines) & set(lost)
    changes = [e for e in c.events if e.kind in (K.TRUNCATED, K.ROTATED, K.SWITCHED)]
    if EVENT[fault] is None:
        assert changes == []
    else:
        assert len(changes) == 1 and changes[0].kind in EVENT[fault], c.stream()[-40:]
        ev = changes[0]
        if fault in ("rename", "copytruncate") and not connected:
            end = {"rename": 1760, "copytruncate": 1650}[fault]  # 11 bytes a line
            n = (end - 1100) // 11
            assert (
                ev.data["old_rest"] == "drain" and f"a.log.1 (bytes 1100 to {end}, {n} lines)" in ev.message
            ), ev.message
            assert (ev.data["rest_from"], ev.data["rest_to"], ev.data["rest_lines"]) == (1100, end, n)
        if fault == "copytruncate" and connected:  # read live before the copy: the copy adds nothing
            assert ev.data["old_rest"] == "read" and "its copy a.log.1 holds nothing more" in ev.message, (
                ev.message
            )
        if ev.kind == K.ROTATED and lost:
            assert ev.data["old_rest"] == "lost" and "not read" in ev.message, ev.message
        if ev.kind == K.ROTATED and not lost:
            assert ev.data["old_rest"] in ("read", "drain") and "not read" not in ev.message, ev.message


async def test_copytruncate_while_down_acceptance(home, running, tmp_path):
    """Stop the server, copy-truncate the followed file and write 400 numbered lines (past the
    old offset), start the server, write 50 more: every line after the truncation arrives
    exactly once (the 100 read before it were read once too)."""
    sshd = running
    p = tmp_path / "app.log"
    append(p, seq_lines(1, 100))
    async with Collector(remote(p)) as c:
        await c.wait_lines(100)
        sshd.stop()
        shutil.copy(p, tmp_path / "app.log.1")
        with open(p, "r+") as f:
            f.truncate(0)
        append(p, new_lines(1, 400))
        assert p.stat().st_size > len(seq_lines(1, 100))
        sshd.start()
        await c.wait_lines(500)
        append(p, new_lines(401, 450))
        await c.wait_lines(550)
        await drained(c, p)
    assert c.lines == [seq(i) for i in range(1, 101)] + [new(i) for i in range(1, 451)] + [LAST]
    tr = evs(c, K.TRUNCATED)
    assert len(tr) == 1 and "rewritten" in tr[0].message and tr[0].data["old_size"] == 1100
    for no, off, text in c.numbered[100:-1]:  # offsets and numbers are those of the new content
        assert text == new(no) and off == (no - 1) * 10


async def test_black_hole_reconnects_within_keepalive_and_resumes_exactly(home, running, tmp_path):
    sshd = running
    proxy = BlackHoleProxy(sshd.port)
    await proxy.start()
    user_home(home.parent / "home", sshd, alias="holebox", port=proxy.port)
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 50))
    try:
        async with Collector(remote(p, "holebox")) as c:
            await c.wait_lines(50)
            proxy.hole = True  # the open connection goes silent: no FIN, no RST
            append(p, seq_lines(51, 80))
            await c.wait_event(K.RECONNECTING)
            proxy.hole = False  # new connections pass again
            append(p, seq_lines(81, 100))
            await c.wait_lines(100)
            await drained(c, p)
    finally:
        await proxy.stop()
    assert "keepalive" in evs(c, K.RECONNECTING)[0].message  # noticed by the keepalive, not by TCP
    assert c.lines == [seq(i) for i in range(1, 101)] + [LAST]
    assert evs(c, K.CONNECTED)[-1].data["reconnect"] is True
    assert not [e for e in c.events if e.kind in (K.TRUNCATED, K.ROTATED)]


async def test_glob_current_deleted_while_down_switches_to_the_newer_match(home, running, tmp_path):
    sshd = running
    d = tmp_path / "logs"
    d.mkdir()
    append(d / "a.log", seq_lines(1, 100))
    async with Collector(remote(f"{d}/*.log")) as c:
        await c.wait_lines(100)
        sshd.kill()
        await c.wait_event(K.RECONNECTING)
        append(d / "a.log", seq_lines(101, 110))  # lost: only ever in a.log, deleted unread
        (d / "a.log").unlink()
        append(d / "b.log", new_lines(1, 50))
        sshd.start()
        await c.wait_lines(150)
        await drained(c, d / "b.log")
    assert c.lines == [seq(i) for i in range(1, 101)] + [new(i) for i in range(1, 51)] + [LAST]
    # SWITCHED, or TRUNCATED when b.log got a.log's inode number: either way the loss is said
    sw = [e for e in c.events if e.kind in (K.SWITCHED, K.TRUNCATED, K.ROTATED)]
    assert len(sw) == 1 and sw[0].kind in (K.SWITCHED, K.TRUNCATED), c.stream()[-5:]
    assert sw[0].data["old_rest"] == "lost" and "not read" in sw[0].message, sw[0].message


async def test_renamed_while_down_and_recreated_later(home, running, tmp_path):
    """The name is missing at the reconnect: the rest of the old file is read under its new name,
    the source waits for the name, and the new file is read when it appears."""
    sshd = running
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 100))
    async with Collector(remote(p)) as c:
        await c.wait_lines(100)
        sshd.kill()
        await c.wait_event(K.RECONNECTING)
        append(p, seq_lines(101, 120))
        os.rename(p, tmp_path / "a.log.1")
        sshd.start()
        await c.wait_lines(120)
        await c.wait_event(K.WAITING)
        append(p, new_lines(1, 30))
        await c.wait_lines(150)
        await drained(c, p)
    assert c.lines == [seq(i) for i in range(1, 121)] + [new(i) for i in range(1, 31)] + [LAST]
    rot = evs(c, K.ROTATED)
    # the rest of the old file was read from a.log.1 at the reconnect; the one event says so
    assert len(rot) == 1 and rot[0].data["old_rest"] == "drain", rot
    assert (rot[0].data["rest_from"], rot[0].data["rest_to"], rot[0].data["rest_lines"]) == (1100, 1320, 20)
    assert "a.log.1 (bytes 1100 to 1320, 20 lines)" in rot[0].message


def test_cli_stream_copytruncate_while_down_acceptance(home, running, tmp_path):
    """The acceptance run through `specwatch stream --jsonl`, as a user runs it."""
    sshd = running
    p = tmp_path / "live.log"
    decode = "[2026-06-01 00:00:00] Decode batch, #running-req: {n}, accept len: 2.50, accept rate: 0.50\n"
    append(p, "".join(decode.format(n=i) for i in range(1, 101)))
    env = {**os.environ, "HOME": str(home)}
    env.pop("SSH_AUTH_SOCK", None)
    args = ["stream", "--jsonl", "--idle", "0", "--reconnect-max", "1", f"logbox:{p}"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    got: list[dict] = []
    reader = threading.Thread(target=lambda: got.extend(json.loads(x) for x in proc.stdout), daemon=True)
    reader.start()

    def wait(cond) -> None:
        def holds() -> bool:
            assert proc.poll() is None, got[-5:]
            return bool(cond())

        wait_until(holds, what="the stream's records", show=lambda: got[-5:])

    def records() -> list[int]:
        return [g["running_req"] for g in list(got) if g["kind"] == "record"]

    def events() -> list[str]:
        return [g["event"] for g in list(got) if g["kind"] == "event"]

    try:
        wait(lambda: len(records()) == 100)
        sshd.stop()
        wait(lambda: "reconnecting" in events())
        shutil.copy(p, tmp_path / "live.log.1")
        os.truncate(p, 0)
        append(p, "".join(decode.format(n=1000 + i) for i in range(1, 401)))
        sshd.start()
        wait(lambda: len(records()) == 500)
        append(p, "".join(decode.format(n=1000 + i) for i in range(401, 451)))
        wait(lambda: len(records()) == 550)
        append(p, decode.format(n=9999))  # nothing more may come: a last record, after all the others
        wait(lambda: 9999 in records())
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
        reader.join(5)
    assert records() == list(range(1, 101)) + [1000 + i for i in range(1, 451)] + [9999]
    assert events().count("truncated") == 1 and "Traceback" not in err
