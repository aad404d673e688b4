"""Faults while connected, through `specwatch stream --jsonl` as a user runs it, for a local file
and over SSH (Debian's OpenSSH sshd on 127.0.0.1, started by the fixtures; with CI=true a missing
sshd fails): every written line is numbered (its ``#running-req``) and must arrive exactly once
and in order, and the event must say what happened.

* a copytruncate (``cp f f.1; : > f``) right after a burst of lines that the follower has not
  read yet (it is stopped with SIGSTOP meanwhile, so the burst is only in the copy): the rest is
  read from the copy, and the ``truncated`` event gives the bytes and lines read from it;
* a rotation (rename + create) whose old file is still written for 5 s: it is read until it has
  been quiet, then the new file; the ``rotated`` event says it was read to its end.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from _wait import wait_until

from tui.core.sources.identity import plural

LINE = "[2026-06-01 00:00:00] Decode batch, #running-req: {n}, accept len: 2.50, accept rate: 0.50\n"
END = 999_999  # the last line of a test: once it arrives, nothing before it may still come


def lines(a: int, b: int) -> str:
    return "".join(LINE.format(n=i) for i in range(a, b + 1))


def append(p: Path, text: str) -> None:
    with open(p, "a") as f:
        f.write(text)


class Stream:
    """`python -m tui stream --jsonl SOURCE` in a subprocess, its objects collected by a thread."""

    def __init__(self, source: str, env: dict) -> None:
        args = ["stream", "--jsonl", "--idle", "0", "--reconnect-max", "1", source]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tui", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.got: list[dict] = []
        assert self.proc.stdout is not None
        out = self.proc.stdout
        self.reader = threading.Thread(
            target=lambda: self.got.extend(json.loads(x) for x in out), daemon=True
        )
        self.reader.start()
        self.err = ""

    def records(self) -> list[int]:
        return [g["running_req"] for g in list(self.got) if g["kind"] == "record"]

    def events(self, kind: str | None = None) -> list[dict]:
        return [g for g in list(self.got) if g["kind"] == "event" and kind in (None, g["event"])]

    def records_before(self, ev: dict) -> int:
        """Records that came before the event ``ev``."""
        got = list(self.got)
        return sum(1 for g in got[: got.index(ev)] if g["kind"] == "record")

    def wait(self, cond, what: str) -> None:
        def holds() -> bool:
            assert self.proc.poll() is None, self.got[-5:]
            return bool(cond())

        wait_until(holds, what=what, show=lambda: [self.records()[-3:], self.events()[-3:]])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        _, self.err = self.proc.communicate(timeout=20)
        self.reader.join(5)


@pytest.fixture(params=["local", "ssh"])
def where(request, tmp_path):
    """(how SOURCE names a file, the environment of the CLI) for a local file and over SSH."""
    env = {**os.environ}
    env.pop("SSH_AUTH_SOCK", None)
    if request.param == "local":
        return (lambda p: str(p)), env
    home = request.getfixturevalue("home")  # starts the module's sshd
    env["HOME"] = str(home)
    return (lambda p: f"logbox:{p}"), env


def test_copytruncate_right_after_a_burst_reads_the_rest_from_the_copy(where, tmp_path):
    name, env = where
    p = tmp_path / "live.log"
    append(p, lines(1, 100))
    s = Stream(name(p), env)
    try:
        s.wait(lambda: len(s.records()) == 100, "the first 100 records")
        s.proc.send_signal(signal.SIGSTOP)  # the follower is behind: the burst is not read yet
        try:
            for a in range(101, 401, 30):  # a burst of 300 lines, in writes of 30
                append(p, lines(a, a + 29))
            shutil.copy(p, tmp_path / "live.log.1")  # logrotate's copytruncate
            os.truncate(p, 0)
        finally:
            s.proc.send_signal(signal.SIGCONT)
        s.wait(lambda: s.events("truncated"), "the truncated event")
        append(p, lines(1001, 1150))
        append(p, LINE.format(n=END))
        s.wait(lambda: END in s.records(), "the last record")
    finally:
        s.stop()
    assert s.records() == list(range(1, 401)) + list(range(1001, 1151)) + [END]
    assert "Traceback" not in s.err
    (ev,) = s.events("truncated")
    assert s.records_before(ev) == 400  # the whole old content, then the event
    data, msg = ev["data"], ev["message"]
    # the burst lines the live follower read before the truncation (the remote tail may have
    # read some, or all, of them before it)
    (read_live,) = [k for k in range(301) if len(lines(1, 100 + k).encode()) == data["old_size"]]
    if read_live == 300:
        assert data["old_rest"] == "read" and "holds nothing more" in msg, ev
    else:
        start, end = data["old_size"], len(lines(1, 400).encode())
        assert data["old_rest"] == "drain", ev
        assert (data["rest_from"], data["rest_to"], data["rest_lines"]) == (start, end, 300 - read_live), ev
        assert f"live.log.1 (bytes {start} to {end}, {plural(300 - read_live, 'line')})" in msg, msg
    assert "not read" not in msg, msg


def test_rotated_file_written_for_5s_more_is_read_to_its_end(where, tmp_path):
    name, env = where
    p = tmp_path / "app.log"
    append(p, lines(1, 100))
    s = Stream(name(p), env)
    late_for = 5.0
    try:
        s.wait(lambda: len(s.records()) == 100, "the first 100 records")
        writer = open(p, "a")  # the program's descriptor stays on the renamed file
        try:
            os.rename(p, tmp_path / "app.log.1")
            append(p, lines(1001, 1050))  # the new file, noticed at once
            end = time.monotonic() + late_for
            n = 101
            while time.monotonic() < end:  # the program writes to the old file for 5 s more
                writer.write(LINE.format(n=n))
                writer.flush()
                n += 1
                time.sleep(late_for / 100)
        finally:
            writer.close()
        append(p, lines(1051, 1100))
        append(p, LINE.format(n=END))
        s.wait(lambda: END in s.records(), "the last record")
    finally:
        s.stop()
    assert s.records() == list(range(1, n)) + list(range(1001, 1101)) + [END]
    assert "Traceback" not in s.err
    (ev,) = s.events("rotated")
    assert s.records_before(ev) == n - 1  # every late line came before the switch
    assert ev["data"]["old_rest"] == "read" and "read to its end" in ev["message"], ev
    assert ev["data"]["old_read_to"] == len(lines(1, n - 1).encode()), ev
