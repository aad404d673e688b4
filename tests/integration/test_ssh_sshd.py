"""End to end against Debian's OpenSSH sshd on 127.0.0.1 (its own host key, authorized key,
config and pid file), reached as a user would: a temporary HOME whose ~/.ssh/config names the
host by an alias, with the key and known_hosts there. With CI=true a missing sshd fails."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from _sources_util import Collector, append, collecting, seq, seq_lines
from _ssh_util import FAST_SSH, _children
from _wait import wait_until_async

from tui.core.sources.base import EventKind as K
from tui.core.sources.spec import parse_source_spec
from tui.core.sources.ssh.connect import SshSettings
from tui.core.sources.ssh.source import SshSource

ROOT = Path(__file__).parent.resolve().parents[1]


def evs(c, kind):
    return [e for e in c.events if e.kind == kind]


def alias_source(path, **kw) -> SshSource:
    spec = parse_source_spec(f"logbox:{path}")
    return SshSource(spec.ssh, "remote", settings=SshSettings(**FAST_SSH), idle_after=None, **kw)


async def test_alias_from_ssh_config_user_port_and_key(home, sshd, tmp_path):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 3))
    src = alias_source(p)
    async with Collector(src) as c:
        await c.wait_lines(3)
        append(p, seq_lines(4, 5))
        await c.wait_lines(5)
    assert c.lines == [seq(i) for i in range(1, 6)]
    conn = evs(c, K.CONNECTED)[0]
    assert conn.data["where"] == f"root@127.0.0.1:{sshd.port}" and "OpenSSH" in conn.data["server_version"]


async def test_killed_sshd_every_line_exactly_once_in_order(home, sshd, tmp_path):
    p = tmp_path / "seq.log"
    append(p, seq_lines(1, 100))
    src = alias_source(p)
    stop = threading.Event()
    written = [100]

    def writer() -> None:  # keeps writing through the outage, one line every 5 ms
        while not stop.is_set():
            written[0] += 1
            append(p, seq(written[0]) + "\n")
            time.sleep(0.005)  # pacing: the writer's own rate, not a wait for a state

    async def more_written(n: int) -> None:
        until = written[0] + n
        await wait_until_async(lambda: written[0] >= until, what=f"{n} more lines written")

    async with Collector(src) as c:
        await c.wait_lines(100)
        t = threading.Thread(target=writer)
        t.start()
        try:
            await c.wait_lines(150)  # the writer's lines read live
            sshd.kill()  # the listener and the session processes, as in a crash
            await c.wait_for(lambda c: K.RECONNECTING in c.kinds)
            tries = c.kinds.count(K.RECONNECTING)
            await more_written(100)  # lines written during the outage ...
            await c.wait_event(K.RECONNECTING, tries + 1)  # ... while the client keeps trying
            sshd.start()
            await c.wait_event(K.CONNECTED, 2)
            at = written[0]
            await c.wait_lines(at + 50)  # lines written after the reconnect read live too
        finally:
            stop.set()
            t.join()
        await c.wait_lines(written[0])
    assert c.lines == [seq(i) for i in range(1, written[0] + 1)]
    assert K.TRUNCATED not in c.kinds and K.ROTATED not in c.kinds
    assert evs(c, K.CONNECTED)[-1].data["reconnect"] is True


async def test_hung_host_is_noticed_by_keepalive(home, sshd, tmp_path):
    p = tmp_path / "a.log"
    append(p, "x\n")
    src = alias_source(p)
    async with Collector(src) as c:
        await c.wait_lines(1)
        sessions = [pid for pid in _children(sshd.proc.pid) if _comm(pid).startswith("sshd")]
        assert sessions
        for pid in sessions:
            os.kill(pid, signal.SIGSTOP)  # a frozen host: no FIN, no RST, just silence
        try:
            await c.wait_for(lambda c: K.RECONNECTING in c.kinds)
        finally:
            for pid in sessions:
                os.kill(pid, signal.SIGCONT)
        await c.wait_for(lambda c: len(evs(c, K.CONNECTED)) >= 2)
    assert "keepalive" in evs(c, K.RECONNECTING)[0].message  # noticed by the keepalive, not by TCP


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


async def test_several_files_share_one_connection(home, sshd, tmp_path):
    paths = [tmp_path / f"f{i}.log" for i in range(3)]
    for i, p in enumerate(paths):
        append(p, f"file {i}\n")
    log = sshd.d / "sshd.log"
    before = log.read_text().count("Accepted publickey")
    settings = SshSettings(**FAST_SSH)
    sources = [
        SshSource(parse_source_spec(f"logbox:{p}").ssh, f"s{i}", settings=settings, idle_after=None)
        for i, p in enumerate(paths)
    ]
    async with collecting(sources) as cols:
        for i, c in enumerate(cols):
            await c.wait_lines(1)
            assert c.lines == [f"file {i}"]
    assert log.read_text().count("Accepted publickey") - before == 1


def _cli(args: list[str], home: Path, **kw) -> subprocess.Popen:
    env = {**os.environ, "HOME": str(home)}
    env.pop("SSH_AUTH_SOCK", None)
    return subprocess.Popen(
        [sys.executable, "-m", "tui", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
        **kw,
    )


DECODE = "[2026-06-01 00:00:{s:02d}] Decode batch, #running-req: 1, accept len: {al:.2f}, accept rate: 0.50\n"


def test_cli_stream_jsonl_over_the_alias(home, sshd, tmp_path):
    p = tmp_path / "live.log"
    append(p, "".join(DECODE.format(s=i, al=2 + i / 10) for i in range(3)))
    proc = _cli(["stream", "--jsonl", "--idle", "0", f"logbox:{p}"], home)
    got = []
    try:
        deadline = time.time() + 10
        while len([g for g in got if g["kind"] == "record"]) < 5 and time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            got.append(json.loads(line))
            if len([g for g in got if g["kind"] == "record"]) == 3:
                append(p, "".join(DECODE.format(s=i, al=2 + i / 10) for i in range(3, 5)))
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    records = [g for g in got if g["kind"] == "record"]
    assert [r["accept_len"] for r in records] == [2.0, 2.1, 2.2, 2.3, 2.4]
    assert records[0]["path"] == f"logbox:{p}" and records[0]["source"] == f"logbox:{p}"
    events = [g["event"] for g in got if g["kind"] == "event"]
    assert events[:2] == ["connected", "opened"]
    assert proc.returncode == 143 and "Traceback" not in err


def test_cli_summary_json_over_the_alias(home, sshd, tmp_path):
    p = tmp_path / "done.log"
    append(p, "".join(DECODE.format(s=i % 60, al=1 + (i % 7) / 2) for i in range(2000)))
    proc = _cli(["summary", "--json", f"run=logbox:{p}"], home)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    src = json.loads(out)["sources"][0]
    assert src["label"] == "run" and src["records"] == 2000 and src["bytes"] == p.stat().st_size
    local = _cli(["summary", "--json", f"run={p}"], home)
    lout, _ = local.communicate(timeout=30)
    lsrc = json.loads(lout)["sources"][0]
    assert src["accept_len"] == lsrc["accept_len"] and src["segments"] == lsrc["segments"]


def test_cli_unknown_host_refused_then_accepted_with_the_flag(home, sshd, tmp_path):
    p = tmp_path / "a.log"
    append(p, DECODE.format(s=1, al=2.5))
    kh = home / ".ssh" / "known_hosts"
    kh.write_text("")
    proc = _cli(["stream", "--jsonl", "--no-follow", f"logbox:{p}"], home)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 1 and '"record"' not in out
    fp = subprocess.run(
        ["ssh-keygen", "-lf", str(sshd.d / "host_ed25519.pub")], capture_output=True, text=True
    ).stdout.split()[1]
    assert fp in err and "--accept-new-host-key" in err and "Traceback" not in err
    proc = _cli(["stream", "--jsonl", "--no-follow", "--accept-new-host-key", f"logbox:{p}"], home)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert [json.loads(x)["accept_len"] for x in out.splitlines() if '"record"' in x] == [2.5]
    assert kh.read_text().startswith(f"[127.0.0.1]:{sshd.port} ssh-ed25519 ")
    # a changed key is refused even with the flag
    kh.write_text(
        f"[127.0.0.1]:{sshd.port} " + " ".join((sshd.d / "client_ed25519.pub").read_text().split()[:2]) + "\n"
    )
    proc = _cli(["stream", "--jsonl", "--no-follow", "--accept-new-host-key", f"logbox:{p}"], home)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 1 and "CHANGED" in err and '"record"' not in out


def test_cli_errors_are_one_line(home, sshd, tmp_path):
    cases = [
        (f"logbox:{tmp_path}/missing.log", "no such file"),
        ("no-such-host.invalid:/x.log", "unknown host name"),
    ]
    for text, want in cases:
        proc = _cli(["stream", "--no-follow", text], home)
        out, err = proc.communicate(timeout=20)
        lines = [x for x in err.splitlines() if x.strip()]
        assert proc.returncode == 1 and want in err and "Traceback" not in err, err
        assert len(lines) == 1, err
    url = f"ssh://root@127.0.0.1:{free_closed_port()}/{tmp_path}/x.log"
    proc = _cli(["summary", url], home)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 2 and "connection refused" in err and len(err.strip().splitlines()) == 1


def free_closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
