"""SSH sources against asyncssh's own in-process server, which runs each command with the real
local ``sh``/``tail``/``stat`` (no mock of SSH or of the remote side)."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import random
import shutil
from pathlib import Path

import asyncssh
import pytest
from _sources_util import Collector, append, collecting, seq, seq_lines
from _ssh_util import ExecServer, known_hosts_line, listed, sent, write_keypair
from _wait import wait_until_async

from tui.core.sources.base import EventKind as K
from tui.core.sources.kinds.remote_whole import summarize_remote
from tui.core.sources.lines import END, StartAt, find_start
from tui.core.sources.spec import SourceSpecError, SshTarget, open_source, parse_source_spec
from tui.core.sources.ssh.connect import pool_size
from tui.core.sources.ssh.remote_side import ReaderDemux, RemotePathError, parse_remote_path
from tui.core.sources.ssh.source import SshSource


def source(srv: ExecServer, path, **kw) -> SshSource:
    settings = kw.pop("settings", None) or srv.settings(**kw.pop("ssh", {}))
    return SshSource(
        SshTarget("127.0.0.1", str(path), "u", srv.port),
        kw.pop("name", "remote"),
        settings=settings,
        idle_after=kw.pop("idle_after", None),
        **kw,
    )


def evs(c: Collector, kind) -> list:
    return [e for e in c.events if e.kind == kind]


def expected(a: int, b: int) -> list[str]:
    return [seq(i) for i in range(a, b + 1)]


# -- pure parts ---------------------------------------------------------------------------------


def test_remote_paths_are_validated_before_any_shell():
    assert parse_remote_path("/data/logs/x.log").base == "x.log"
    assert parse_remote_path("~/logs/*.log").dir == "logs" and parse_remote_path("~/logs/*.log").glob
    assert parse_remote_path("x.log").dir == "."
    for bad, why in [
        ("/data/*/x.log", "last path component"),
        ("/data/logs/", "directory"),
        ("/a/x\n.log", "newline"),
        ("~bob/x.log", "~user"),
        ("/a/[ab.log", "unclosed"),
        ("/a/x\\*.log", "not allowed"),
    ]:
        with pytest.raises(RemotePathError, match=why):
            parse_remote_path(bad)
    with pytest.raises(SourceSpecError, match="last path component"):
        open_source(parse_source_spec("gpu1:/data/*/x.log"))


def test_demux_finds_records_and_tail_messages_split_anywhere():
    tag, nonce = "\x1fspecwatch-abc", "./././/./"
    stream = (
        f"{tag} H ok 1:2 10 0 1\n".encode()
        + b"line one\nhalf a li"
        + f"{tag} S\nregular file|1:2|30|./x\nregular file|1:2|30|/proc/9/fd/3\n{tag} E\n".encode()
        + b"ne\nthis tail: is data\ntail: "
        + f"{nonce}x.log: file truncated\n".encode()
        + b"after\ntail: inotify cannot be used, reverting to polling\nlast\n"
    )
    for cut in range(1, len(stream)):
        d = ReaderDemux(tag, nonce)
        parts = d.feed(stream[:cut]) + d.feed(stream[cut:])
        data = b"".join(v for k, v in parts if k == "data")
        assert data == b"line one\nhalf a line\nthis tail: is data\nafter\nlast\n", cut
        kinds = [k for k, _ in parts if k != "data"]
        assert kinds == ["header", "status", "tail", "tail"], cut
        st = next(v for k, v in parts if k == "status")
        assert st.name.identity == "1:2" and st.open.name == "/proc/9/fd/3"


# -- following ----------------------------------------------------------------------------------


async def test_append_partial_line_offsets_and_numbers(server, tmp_path):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 3))
    src = source(server, p)
    async with Collector(src) as c:
        await c.wait_lines(3)
        append(p, seq_lines(4, 5) + "line 000")  # the partial last line is held
        await c.wait_lines(5)
        await wait_until_async(lambda: sent(server).endswith(b"line 000"), what="the partial line sent")
        assert len(c.lines) == 5
        append(p, "06\n" + seq_lines(7, 9))
        await c.wait_lines(9)
    assert c.lines == expected(1, 9)
    assert c.kinds == [K.CONNECTED, K.OPENED]
    data = p.read_bytes()
    for no, off, text in c.numbered:
        assert data[off:].split(b"\n", 1)[0].decode() == text and text == seq(no)
    assert pool_size() == 0  # the connection went with its last source


@pytest.mark.parametrize("start", [END, StartAt("last", 3), StartAt("last", 50)])
@pytest.mark.parametrize("tail_text", ["", "partial"])
async def test_from_end_and_last_lines_match_the_local_rule(server, tmp_path, start, tail_text):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 20) + tail_text)
    with open(p, "rb") as f:
        want_off = find_start(f.fileno(), p.stat().st_size, start)
    src = source(server, p, follow=False, start=start)
    async with Collector(src) as c:
        await c.wait_for(lambda c: K.EOF in c.kinds)
    numbered = c.numbered
    first = numbered[0] if numbered else None
    if want_off < p.stat().st_size:
        assert first[1] == want_off
        assert first[0] == p.read_bytes()[:want_off].count(b"\n") + 1
    opened = evs(c, K.OPENED)[0]
    assert opened.data["offset"] == want_off


async def test_truncate_is_an_event_and_reading_starts_again(server, tmp_path):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 50))
    src = source(server, p)
    async with Collector(src) as c:
        await c.wait_lines(50)
        p.write_text("")
        await c.wait_event(K.TRUNCATED)
        append(p, seq_lines(51, 53))
        await c.wait_lines(53)
    assert c.lines == expected(1, 53)
    tr = evs(c, K.TRUNCATED)
    assert len(tr) == 1 and tr[0].data["old_size"] == len(seq_lines(1, 50))
    assert c.numbered[-3][:2] == (1, 0)


async def test_rotation_finishes_the_old_file_then_follows_the_new_one(server, tmp_path):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 5))
    src = source(server, p)
    async with Collector(src) as c:
        await c.wait_lines(5)
        os.rename(p, tmp_path / "a.log.1")
        append(tmp_path / "a.log.1", seq_lines(6, 7))  # the writer still has the old file open
        append(p, seq_lines(8, 9))
        await c.wait_lines(9)
    assert c.lines == expected(1, 9)
    rot = evs(c, K.ROTATED)
    assert len(rot) == 1 and rot[0].data["old_inode"] != rot[0].data["inode"]
    kinds = [b.kind if hasattr(b, "kind") else "lines" for b in c.items]
    assert kinds.index(K.ROTATED) < len(kinds) - 1


async def test_glob_follows_the_newest_and_switches_to_a_newer_match(server, tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    append(d / "old.log", "old 1\n")
    os.utime(d / "old.log", (1, 1))
    append(d / "run1.log", seq_lines(1, 3))
    src = source(server, f"{d}/*.log")
    async with Collector(src) as c:
        await c.wait_lines(3)
        append(d / "run2.log", seq_lines(4, 6))
        await c.wait_lines(6)
        append(d / "old.log", "old 2\n")  # an old match never takes over
        await listed(server, 2)
    assert c.lines == expected(1, 6)
    sw = evs(c, K.SWITCHED)
    assert len(sw) == 1 and sw[0].path.endswith("run2.log") and sw[0].data["old_path"].endswith("run1.log")
    assert "newest of 2" in evs(c, K.OPENED)[0].message


async def test_missing_file_waits_and_is_read_when_it_appears(server, tmp_path):
    p = tmp_path / "later.log"
    src = source(server, p)
    async with Collector(src) as c:
        await c.wait_for(lambda c: K.WAITING in c.kinds)
        assert "waiting for it to appear" in evs(c, K.WAITING)[0].message
        append(p, seq_lines(1, 2))
        await c.wait_lines(2)
    assert c.kinds == [K.CONNECTED, K.WAITING, K.OPENED]


async def test_odd_path_is_read_and_nothing_is_executed(server, tmp_path):
    d = tmp_path / "we ird"
    d.mkdir()
    p = d / "a 'b' \"c\"; touch pwned; $(touch pwned2) `touch pwned3`.log"
    append(p, seq_lines(1, 2))
    src = source(server, p, follow=False)
    async with Collector(src) as c:
        await c.wait_for(lambda c: K.EOF in c.kinds)
    assert c.lines == expected(1, 2)
    assert not list(tmp_path.rglob("pwned*")) and not list(Path(server.tmp).rglob("pwned*"))
    glob_src = source(server, f"{d}/a*;*.log", follow=False)
    async with Collector(glob_src) as c:
        await c.wait_for(lambda c: K.EOF in c.kinds)
    assert c.lines == expected(1, 2)


async def test_no_follow_missing_is_a_fatal_error(server, tmp_path):
    src = source(server, tmp_path / "nope.log", follow=False)
    async with Collector(src) as c:
        await c.wait_for(lambda c: K.ERROR in c.kinds)
    assert src.error.startswith("no such file: 127.0.0.1:") and evs(c, K.ERROR)[0].data["fatal"]


async def test_tail_missing_on_the_host_is_a_clear_error(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("sh", "stat", "head", "wc", "sleep", "cat"):
        os.symlink(shutil.which(tool), bindir / tool)
    srv = ExecServer(tmp_path, env={"PATH": str(bindir)})
    await srv.start()
    try:
        append(tmp_path / "a.log", "x\n")
        src = source(srv, tmp_path / "a.log")
        async with Collector(src) as c:
            await c.wait_for(lambda c: K.ERROR in c.kinds)
        assert "`tail` was not found on u@127.0.0.1" in src.error and "\n" not in src.error
        assert c.lines == []
    finally:
        await srv.stop()


async def test_permission_denied_is_fatal_at_the_start(tmp_path):
    srv = ExecServer(tmp_path)
    await srv.start()
    d = Path(f"/tmp/specwatch-perm-{os.getpid()}")
    d.mkdir(mode=0o755, exist_ok=True)
    try:
        p = d / "secret.log"
        p.write_text("x\n")
        os.chmod(p, 0o600)
        srv.user = 65534
        src = source(srv, p)
        async with Collector(src) as c:
            await c.wait_for(lambda c: K.ERROR in c.kinds)
        assert src.error == f"permission denied: cannot read 127.0.0.1:{p}"
    finally:
        shutil.rmtree(d, ignore_errors=True)
        await srv.stop()


# -- security -----------------------------------------------------------------------------------


async def test_changed_host_key_is_refused_and_nothing_is_read(server, tmp_path):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 3))
    other = asyncssh.generate_private_key("ssh-ed25519")
    kh = tmp_path / "stale_known_hosts"
    kh.write_text(known_hosts_line("127.0.0.1", server.port, other))
    src = source(server, p, ssh={"accept_new_host_key": True, "connect_options": {"known_hosts": str(kh)}})
    async with Collector(src) as c:
        await c.wait_for(lambda c: K.ERROR in c.kinds)
    assert "host key has CHANGED" in src.error and "ssh-keygen -R" in src.error
    assert c.lines == [] and evs(c, K.ERROR)[0].data["fatal"]


async def test_unknown_host_is_refused_with_its_fingerprint_then_accepted_on_request(server, tmp_path):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 3))
    kh = tmp_path / "empty_known_hosts"
    kh.write_text("")
    src = source(server, p, ssh={"connect_options": {"known_hosts": str(kh)}})
    async with Collector(src) as c:
        await c.wait_for(lambda c: K.ERROR in c.kinds)
    fp = server.host_key.get_fingerprint("sha256")
    assert fp in src.error and "--accept-new-host-key" in src.error and c.lines == []
    src = source(server, p, ssh={"accept_new_host_key": True, "connect_options": {"known_hosts": str(kh)}})
    async with Collector(src) as c:
        await c.wait_lines(3)
    assert fp in evs(c, K.CONNECTED)[0].message and "accepted and recorded" in evs(c, K.CONNECTED)[0].message
    recorded = kh.read_text()
    assert recorded.startswith(f"[127.0.0.1]:{server.port} ssh-ed25519 ")
    src = source(server, p, ssh={"connect_options": {"known_hosts": str(kh)}})  # now known: no flag needed
    async with Collector(src) as c:
        await c.wait_lines(3)


async def test_wrong_client_key_is_an_auth_error(server, tmp_path):
    p = tmp_path / "a.log"
    append(p, "x\n")
    wrong = tmp_path / "wrong_key"
    write_keypair(wrong)
    src = source(server, p, ssh={"connect_options": {"client_keys": [str(wrong)]}})
    async with Collector(src) as c:
        await c.wait_for(lambda c: K.ERROR in c.kinds)
    assert "authentication failed for u@127.0.0.1" in src.error and evs(c, K.ERROR)[0].data["fatal"]


# -- connections --------------------------------------------------------------------------------


async def test_files_on_one_host_share_one_connection(server, tmp_path):
    paths = [tmp_path / f"f{i}.log" for i in range(3)]
    for i, p in enumerate(paths):
        append(p, f"file {i}\n")
    settings = server.settings()
    sources = [source(server, p, settings=settings, name=f"s{i}") for i, p in enumerate(paths)]
    async with collecting(sources) as cols:
        for i, c in enumerate(cols):
            await c.wait_lines(1)
            assert c.lines == [f"file {i}"]
        assert server.connections == 1 and pool_size() == 1
    assert pool_size() == 0


async def test_server_restart_resumes_exactly_where_it_was(server, tmp_path):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 10) + "line 000")
    src = source(server, p)
    async with Collector(src) as c:
        await c.wait_lines(10)
        await server.stop()
        append(p, "11\n" + seq_lines(12, 20))
        await c.wait_event(K.RECONNECTING, 2)  # a retry failed while the server was down
        await server.start(server.port)
        await c.wait_lines(20)
        append(p, seq_lines(21, 22))
        await c.wait_lines(22)
    assert c.lines == expected(1, 22)
    assert K.TRUNCATED not in c.kinds and K.ROTATED not in c.kinds
    assert evs(c, K.CONNECTED)[-1].data["reconnect"] is True
    data = p.read_bytes()
    for no, off, text in c.numbered:
        assert data[off:].split(b"\n", 1)[0].decode() == text and text == seq(no)


async def test_file_replaced_while_disconnected_is_a_rotation(server, tmp_path):
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 5))
    src = source(server, p)
    async with Collector(src) as c:
        await c.wait_lines(5)
        await server.stop()
        os.rename(p, tmp_path / "a.log.1")
        append(p, seq_lines(6, 7))
        await server.start(server.port)
        await c.wait_lines(7)
    assert c.lines == expected(1, 7) and len(evs(c, K.ROTATED)) == 1


async def test_a_compressed_generation_renamed_while_its_head_is_fetched_is_found_again(server, tmp_path):
    """The set rotates between the listing and the fetch of a compressed file's first bytes (by
    which a known generation is known under its new inode): the fetch finds it where the rotation
    took it (``a.log.3.gz``, named so in the event), never is the generation taken for lost."""
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 5))
    src = source(server, p)
    renamed: list[str] = []

    def compress_two() -> None:
        two = tmp_path / "a.log.2"
        (tmp_path / "a.log.2.gz").write_bytes(gzip.compress(two.read_bytes()))
        two.unlink()

    def rotate_under_the_fetch(cmd: str) -> None:
        if "a.log.2.gz" in cmd and "65536" in cmd and not renamed:  # the head fetch of a.log.2.gz
            # logrotate with delaycompress, once more: .2.gz -> .3.gz, .1 -> .2 (gzipped), a.log -> .1
            os.rename(tmp_path / "a.log.2.gz", tmp_path / "a.log.3.gz")
            os.rename(tmp_path / "a.log.1", tmp_path / "a.log.2")
            compress_two()
            os.rename(p, tmp_path / "a.log.1")
            append(p, seq_lines(12, 13))
            renamed.append(cmd)

    async with Collector(src) as c:
        await c.wait_lines(5)
        await server.stop()
        append(p, seq_lines(6, 7))  # written after the last read: the rest of generation A
        os.rename(p, tmp_path / "a.log.2")
        compress_two()  # A now lives on another inode, known by its first bytes
        append(tmp_path / "a.log.1", seq_lines(8, 9))
        append(p, seq_lines(10, 11))
        server.before_exec = rotate_under_the_fetch
        await server.start(server.port)
        await c.wait_lines(13)
    assert renamed, "the head of a.log.2.gz was never fetched: the race was not made"
    assert c.lines == expected(1, 13)
    rot = evs(c, K.ROTATED)
    assert len(rot) == 1 and not rot[0].data["lost"] and rot[0].data["old_rest"] == "drain", rot[0].message
    read = [g["path"].rsplit("/", 1)[-1] for g in rot[0].data["generations"]]
    assert read == ["a.log.3.gz", "a.log.2.gz", "a.log.1"], rot[0].message


async def test_a_host_slow_to_start_the_reader_is_named_once_and_then_read(server, tmp_path, monkeypatch):
    """A login shell on the host that takes long before it runs the reader (a slow ~/.bashrc):
    the source says so once, non-fatal, while it waits; the lines come when the shell is done."""
    from tui.core.sources.ssh import tail

    monkeypatch.setattr(tail, "READER_START_WARN_S", 0.2)
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 5))
    shell_done = asyncio.Event()
    held: list[str] = []

    async def slow_shell(cmd: str) -> None:
        if "a.log" in cmd and not shell_done.is_set():
            held.append(cmd)
            await shell_done.wait()

    server.before_exec = slow_shell
    async with Collector(source(server, p)) as c:
        await c.wait_event(K.WAITING)
        assert c.lines == [] and held
        shell_done.set()
        await c.wait_lines(5)
        append(p, seq_lines(6, 7))
        await c.wait_lines(7)
    assert c.lines == expected(1, 7)
    (err,) = evs(c, K.WAITING)  # a wait, not an error: the pane says "waiting (…)"
    assert not evs(c, K.ERROR) and err.data["reason"] == "slow_start" and err.data["seconds"] == 0.2, err
    assert "has not started reading" in err.message and "a.log" in err.message, err.message
    assert "~/.bashrc" in err.message and "still waiting" in err.message, err.message


# -- summary and the draft config -----------------------------------------------------------------


async def test_summary_streams_the_remote_file_and_reads_the_draft_config_there(server, tmp_path):
    draft = tmp_path / "eagle3"
    draft.mkdir()
    (draft / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["LlamaForCausalLMEagle3"],
                "num_hidden_layers": 1,
                "eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 23, 44]},
            }
        )
    )
    log = tmp_path / "x.log"
    rng = random.Random(1)
    body = "".join(
        f"[2026-06-01 00:01:{i % 60:02d}] Decode batch, #running-req: 1, accept len: "
        f"{rng.uniform(1, 4):.2f}, accept rate: 0.50\n"
        for i in range(3000)
    )
    log.write_text(
        f"[2026-06-01 00:00:00] server_args=ServerArgs(speculative_algorithm='EAGLE3', "
        f"speculative_draft_model_path='{draft}')\n"
        + body
        + f"[2026-06-01 01:00:00] server_args=ServerArgs(speculative_algorithm='EAGLE3', "
        f"speculative_draft_model_path='{tmp_path}/gone')\n"
    )
    s = await summarize_remote(
        SshTarget("127.0.0.1", str(log), "u", server.port), "remote", "x", server.settings()
    )
    d = s.result()
    assert s.bytes == log.stat().st_size and s.stats.records == 3000
    segs = d["segments"]
    assert segs[0]["config"]["draft"]["aux_layer_ids"] == [1, 23, 44]
    assert segs[0]["config"]["draft"]["config_path"] == f"u@127.0.0.1:{server.port}:{draft}/config.json"
    assert segs[1]["config"]["draft"]["note"] == "config.json not found"
    assert server.connections == 1  # the log and both config.json files over one connection


async def test_live_source_reads_the_draft_config_over_its_own_connection(server, tmp_path):
    draft = tmp_path / "draft"
    draft.mkdir()
    (draft / "config.json").write_text(
        json.dumps({"architectures": ["Eagle3"], "eagle_aux_hidden_state_layer_ids": [2, 16, 29]})
    )
    p = tmp_path / "a.log"
    append(p, "x\n")
    src = source(server, p)
    async with Collector(src) as c:
        await c.wait_lines(1)
        facts = await src.read_draft_config(str(draft), "vllm")
        missing = await src.read_draft_config(str(tmp_path / "nope"), "vllm")
        hub = await src.read_draft_config("org/model", "vllm")
    assert facts["aux_layer_ids"] == [2, 16, 29] and facts["architecture"] == "Eagle3"
    assert missing["note"] == "config.json not found" and "hub id" in hub["note"]
    assert src.draft_resolver()(str(draft), "vllm")["aux_layer_ids"] == [2, 16, 29]
    assert server.connections == 1


async def test_a_catch_up_cut_by_an_outage_is_taken_up_again_after_the_reconnect(server, tmp_path):
    """The catch-up finds a file of the set replaced since its listing (the same bytes on another
    inode: it lists again) and the connection drops at that listing: after the reconnect the set
    is listed again and every generation read, oldest first. Before, the reconnect opened the file
    at the name and ended the catch-up there: the generations in between were skipped unsaid."""
    p = tmp_path / "a.log"
    append(p, seq_lines(1, 5))
    src = source(server, p)
    made: list[str] = []

    async def outage() -> None:
        await server.stop()
        await server.start(server.port)

    def race(cmd: str):
        if "command exec 3<" in cmd and "a.log.2" in cmd and not made:  # the reader of a.log.2
            two = tmp_path / "a.log.2"
            shutil.copy(two, tmp_path / "copy")
            os.rename(tmp_path / "copy", two)
            made.append("replaced")
        elif "ls1()" in cmd and made == ["replaced"]:  # the listing that follows: the host goes away
            made.append("cut")
            asyncio.get_running_loop().create_task(outage())
            return asyncio.get_running_loop().create_future()  # never runs: the connection goes first
        return None

    async with Collector(src) as c:
        await c.wait_lines(5)
        await server.stop()
        for k in range(3):  # three generations rotated away while the host is unreachable
            append(p, seq_lines(6 + 2 * k, 7 + 2 * k))
            for n in range(k, 0, -1):
                os.rename(tmp_path / f"a.log.{n}", tmp_path / f"a.log.{n + 1}")
            os.rename(p, tmp_path / "a.log.1")
        append(p, seq_lines(12, 13))
        server.before_exec = race
        await server.start(server.port)
        await c.wait_lines(13)
    assert made == ["replaced", "cut"], "the race was not made"
    assert c.lines == expected(1, 13)
    rot = evs(c, K.ROTATED)
    assert len(rot) == 1 and not rot[0].data["lost"], rot[0].message
