"""``specwatch stream`` run as a real subprocess."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from _cli_util import run_cli
from _wait import wait_until

ROOT = Path(__file__).parent.resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}


def dec(n: int) -> str:
    """A metric line numbered by its #token field."""
    return (
        f"[2026-01-02 03:04:05 TP0] Decode batch, #running-req: 4, #token: {n}, token usage: 0.01, "
        f"accept len: 2.50, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 99.00, "
        f"#queue-req: 0\n"
    )


ARGS = "[2026-01-02 04:00:00] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3')\n"


def decs(a: int, b: int) -> str:
    return "".join(dec(i) for i in range(a, b + 1))


def cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "tui", "stream", *args]


class Live:
    """A running ``specwatch stream``; its stdout lines arrive on a queue."""

    def __init__(self, *args: str, cwd: Path = ROOT, env: dict | None = None) -> None:
        self.proc = subprocess.Popen(
            cmd(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env or ENV
        )
        self.q: queue.Queue[str] = queue.Queue()
        self.out: list[dict] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.q.put(line)

    def until(self, cond) -> None:
        """:func:`_wait.wait_until` ``cond(out)``, ``out`` being the JSON lines read so far."""

        def holds() -> bool:
            while True:
                try:
                    self.out.append(json.loads(self.q.get_nowait()))
                except queue.Empty:
                    return bool(cond(self.out))

        wait_until(holds, what="the stream's lines", show=lambda: [_short(o) for o in self.out[-10:]])

    def records(self) -> list[int]:
        return [o["tokens"] for o in self.out if o["kind"] == "record"]

    def stop(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        assert self.proc.stderr is not None and self.proc.stdout is not None
        err = self.proc.stderr.read()
        self.reader.join(timeout=5)
        self.proc.stderr.close()
        self.proc.stdout.close()
        while not self.q.empty():  # anything printed after the last wait
            self.out.append(json.loads(self.q.get()))
        return self.proc.returncode, err


def _short(o: dict) -> str:
    return f"record {o['tokens']}" if o["kind"] == "record" else f"{o['kind']} {o.get('event', '')}"


def test_appended_truncated_rotated_and_newer_glob_match(tmp_path):
    """The acceptance scenario: every line once, in order, with the events and segments.
    Segments follow the server, not the file: the truncation and the rotation keep segment 0;
    the newer glob match whose first line is a startup (server_args) opens segment 1, once."""
    a = tmp_path / "a.log"
    a.write_text(decs(1, 3))
    live = Live("--jsonl", f"srv={tmp_path}/*.log")
    try:
        live.until(lambda o: len([x for x in o if x["kind"] == "record"]) == 3)
        with open(a, "a") as f:
            f.write(decs(4, 6))
        live.until(lambda o: live.records()[-1:] == [6])
        with open(a, "w") as f:  # truncate
            f.write(decs(7, 8))
        live.until(lambda o: live.records()[-1:] == [8])
        with open(a, "a") as writer:  # rotate: the old file still gets a line before the new one appears
            os.rename(a, tmp_path / "a.log.1")
            writer.write(dec(9))
        a.write_text(decs(10, 11))
        live.until(lambda o: live.records()[-1:] == [11])
        b = tmp_path / "b.log"  # a relaunched server writes a new log
        b.write_text(ARGS + decs(12, 14))
        live.until(lambda o: live.records()[-1:] == [14])
    finally:
        code, err = live.stop()
    assert code == 130 and err == "specwatch stream: interrupted\n"
    assert live.records() == list(range(1, 15))
    events = [(o["event"], o["segment"]) for o in live.out if o["kind"] == "event"]
    assert events == [("opened", 0), ("truncated", 0), ("rotated", 0), ("switched", 0)]
    segs = {o["tokens"]: o["segment"] for o in live.out if o["kind"] == "record"}
    assert [segs[i] for i in (1, 6, 7, 8, 9, 10, 11, 12, 14)] == [0, 0, 0, 0, 0, 0, 0, 1, 1]
    markers = [(o["marker"], o["segment"]) for o in live.out if o["kind"] == "marker"]
    assert markers == [("server_args", 1)]
    switched = [o for o in live.out if o.get("event") == "switched"][0]
    assert switched["path"] == str(b) and switched["source"] == "srv"
    rec = next(o for o in live.out if o["kind"] == "record")
    assert list(rec)[:6] == ["kind", "source", "segment", "timestamp", "accept_len", "accept_rate"]
    assert list(rec)[-1] == "raw" and rec["raw"] == dec(1).rstrip("\n")
    assert (rec["accept_len"], rec["accept_rate"], rec["timestamp"]) == (2.5, 0.5, "2026-01-02 03:04:05")


def test_stdin_to_eof_and_text_output():
    r = run_cli("stream", "-", input=decs(1, 2) + "noise\n" + dec(3).rstrip("\n"))
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines[0] == "[stdin] -- opened: reading stdin"
    assert lines[1] == (
        "[stdin] 2026-01-02 03:04:05 seg 0 TP0 accept_len=2.50 accept_rate=0.500 "
        "throughput=99.0 running=4 queue=0"
    )
    assert len(lines) == 5 and lines[-1].startswith("[stdin] -- eof")


def test_command_source_with_stderr_and_exit(tmp_path):
    script = f"printf '{decs(1, 2)}'; echo 'warming up' >&2; printf '{dec(3)}'"
    r = run_cli("stream", "--jsonl", f"cmd:{script}")
    assert r.returncode == 0, r.stderr
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["tokens"] for o in out if o["kind"] == "record"] == [1, 2, 3]
    ev = {o["event"]: o for o in out if o["kind"] == "event"}
    assert ev["stderr"]["message"] == "warming up"
    assert ev["exited"]["data"]["returncode"] == 0


def test_from_last_lines_no_follow_and_a_config_name(tmp_path):
    log = tmp_path / "run.log"
    log.write_text(decs(1, 10))
    cfg = tmp_path / "specwatch.toml"
    cfg.write_text(f'[sources]\nrun = {{ source = "{log}", label = "the run" }}\n')
    r = run_cli("stream", "--jsonl", "--from", "-2", "--no-follow", "--config", str(cfg), "run")
    assert r.returncode == 0, r.stderr
    out = [json.loads(line) for line in r.stdout.splitlines()]
    recs = [o for o in out if o["kind"] == "record"]
    assert [(o["tokens"], o["line_no"], o["source"]) for o in recs] == [
        (9, 9, "the run"),
        (10, 10, "the run"),
    ]
    assert out[-1]["event"] == "eof"


def test_a_config_error_names_the_key(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[sources]\nrun = { source = "x.log", lable = "x" }\n')
    r = run_cli("stream", "--config", str(cfg), "run")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == (
        f"specwatch stream: {cfg}: sources.run.lable: unknown key "
        "(did you mean 'label'?); allowed: source, label, alerts"
    )


def test_a_missing_file_without_follow_fails_in_one_line(tmp_path):
    missing = tmp_path / "missing.log"
    r = run_cli("stream", "--no-follow", str(missing))
    assert r.returncode == 1 and r.stderr.strip() == f"specwatch stream: {missing}: no such file: {missing}"


def test_an_unknown_kind_of_source_is_refused_clearly():
    r = run_cli("stream", "foo://host/x.log")
    assert (
        r.returncode == 2
        and r.stdout == ""
        and r.stderr.strip() == ("specwatch stream: foo://host/x.log: foo:// sources are not supported")
    )


def test_ctrl_c_exits_130_with_one_line_and_stops_commands(tmp_path):
    pidfile = tmp_path / "pid"
    live = Live("--jsonl", f"cmd:sleep 60 & echo $! > {pidfile}; printf '{dec(1)}'; wait")
    live.until(lambda o: [x for x in o if x["kind"] == "record"])
    child = int(pidfile.read_text())
    code, err = live.stop()
    assert code == 130 and err == "specwatch stream: interrupted\n"
    wait_until(lambda: _state(child) in ("gone", "Z"), what="the command's child to end")


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return "gone"


@pytest.mark.parametrize("poll", [False, True])
def test_several_sources_interleave_by_arrival(tmp_path, poll):
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_text(dec(1))
    b.write_text(dec(101))
    args = ["--jsonl", f"A={a}", f"B={b}"] + (["--poll", "0.02"] if poll else [])
    live = Live(*args)
    try:
        live.until(lambda o: len(live.records()) == 2)
        with open(b, "a") as f:
            f.write(dec(102))
        live.until(lambda o: live.records()[-1] == 102)
        with open(a, "a") as f:
            f.write(dec(2))
        live.until(lambda o: live.records()[-1] == 2)
    finally:
        code, _ = live.stop()
    assert code == 130
    recs = [(o["source"], o["tokens"]) for o in live.out if o["kind"] == "record"]
    assert sorted(recs[:2]) == [("A", 1), ("B", 101)] and recs[2:] == [("B", 102), ("A", 2)]
