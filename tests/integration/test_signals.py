"""Signals end every command cleanly.

* SIGTERM / SIGHUP in the app commands (in a real terminal: tmux): the pane is out of the
  alternate screen with mouse reporting off (as after `q`), exit status 128 + signal.
* Ctrl-C typed into ``summary`` of a large log (scanning threads running): the prompt is back
  with one line and no traceback, before the scan is done; SIGTERM the same.
* ``stream`` and ``export``: Ctrl-C 130, SIGTERM 143, one line on stderr.

How fast each command stops is a benchmark's question, not a test's: these tests wait for the
exit with a generous deadline (tests/_wait.py).

With CI=true a missing tmux fails; elsewhere those tests are skipped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from _signal_util import alive, children, threads
from _tmux_util import capture, pane
from _wait import DEADLINE, wait_until

ROOT = Path(__file__).parent.resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
VLLM_LINE = (
    "(APIServer pid=4321) INFO 11-20 11:02:{s:02d} [metrics.py:101] SpecDecoding metrics: Mean acceptance "
    "length: 2.{n:02d}, Accepted throughput: 195.10 tokens/s, Drafted throughput: 316.80 tokens/s, Accepted: "
    "1951 tokens, Drafted: 3168 tokens, Per-position acceptance rate: 0.847, 0.573, 0.428, Avg Draft "
    "acceptance rate: 61.6%\n"
)


def big_log(path: Path, size: int = 56 << 20) -> Path:
    """A vLLM log large enough for summary's scanning threads, whose lines take the slow path
    (the line parser reads them: two processes' lines interleaved, which the whole-buffer scanners leave
    to the line parser): summary runs for several seconds."""
    block = "".join(
        VLLM_LINE.format(s=i % 60, n=i % 100).replace("pid=4321", f"pid={4321 + i % 2}") for i in range(2000)
    ).encode()
    with open(path, "wb") as f:
        for _ in range(size // len(block) + 1):
            f.write(block)
    return path


def reading(path: Path, pid: int | None = None) -> bool:
    """A process (``pid``, or any) has ``path`` open."""
    pids = [pid] if pid is not None else [int(p) for p in os.listdir("/proc") if p.isdigit()]
    for p in pids:
        try:
            fds = os.listdir(f"/proc/{p}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{p}/fd/{fd}") == str(path):
                    return True
            except OSError:
                continue
    return False


# -- tmux --------------------------------------------------------------------------------------
def wait_for(cond, what: str, name: str | None = None) -> None:
    """:func:`_wait.wait_until`, failing with the tmux session's screen when ``name`` is given."""
    wait_until(cond, what=what, show=(lambda: "\n" + capture(name)) if name else None, step=0.05)


def python_pid(name: str) -> int:
    shell = int(pane(name, "#{pane_pid}"))
    kids: list[int] = []
    wait_for(lambda: bool(kids.extend(children(shell)) or kids), "the command to start", name=name)
    return kids[0]


def stop_when(proc: subprocess.Popen, ready, sig: signal.Signals) -> tuple[str, str]:
    """Sends ``sig`` to ``proc`` once ``ready()`` (it must still be running then): its stdout and
    stderr once it has ended (it is killed if it has not ended by the deadline)."""
    try:
        wait_until(lambda: ready() or proc.poll() is not None, what="the command to get going")
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(sig)
        return proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def exit_code(exit_file: Path) -> str:
    return exit_file.read_text().strip() if exit_file.exists() else ""


APP_CASES = [
    ("replay", signal.SIGTERM, [str(SAMPLES / "sglang_eagle3_restart.log")]),
    ("watch", signal.SIGHUP, [str(SAMPLES / "ab_a.log")]),
    ("compare", signal.SIGTERM, [str(SAMPLES / "ab_a.log"), str(SAMPLES / "ab_b.log")]),
]


@pytest.mark.parametrize("command,sig,files", APP_CASES, ids=[f"{c}-{s.name}" for c, s, _ in APP_CASES])
def test_app_stop_signal_restores_the_terminal(tmux, tmp_path, command, sig, files):
    name, exit_file = tmux([command, *files], tmp_path)
    wait_for(lambda: "records" in capture(name), "the app to draw", name=name)
    assert pane(name, "#{alternate_on}") == "1" and pane(name, "#{mouse_any_flag}") == "1"
    os.kill(python_pid(name), sig)
    wait_for(lambda: exit_code(exit_file), "an exit", name=name)
    assert exit_code(exit_file) == f"EXIT={128 + sig}"
    assert pane(name, "#{alternate_on}") == "0"
    assert pane(name, "#{mouse_any_flag}") == "0"
    screen = capture(name)
    assert f"specwatch {command}: stopped by {sig.name}" in screen
    assert "Traceback" not in screen


def test_ctrl_c_in_summary_gives_the_prompt_back(tmux, tmp_path):
    log = big_log(tmp_path / "big.log")
    name, exit_file = tmux(["summary", str(log)], tmp_path)
    pid = python_pid(name)
    wait_for(lambda: threads(pid) >= 2, "the scanning threads", name=name)
    workers = children(pid)  # none: the scanning is done by threads
    assert not exit_code(exit_file), "the summary ended before Ctrl-C: make the log larger"
    subprocess.run(["tmux", "send-keys", "-t", name, "C-c"], check=True)
    wait_for(lambda: exit_code(exit_file), "the prompt back", name=name)
    assert exit_code(exit_file) == "EXIT=130", capture(name)
    screen = capture(name)
    assert "specwatch summary: interrupted" in screen
    assert "Traceback" not in screen and "KeyboardInterrupt" not in screen, screen
    assert "records" not in screen  # stopped the scan: no summary was printed
    assert not any(alive(w) for w in workers)


# -- plain processes ------------------------------------------------------------------------------
def test_sigterm_in_summary_stops_the_scan(tmp_path):
    log = big_log(tmp_path / "big.log")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui", "summary", str(log)],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: threads(proc.pid) >= 2, "the scanning threads")
        workers = children(proc.pid)  # none: the scanning is done by threads
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143
    assert err == "specwatch summary: stopped by SIGTERM\n" and out == ""  # no summary: the scan stopped
    wait_for(lambda: not any(alive(w) for w in workers), "the workers to end")


def _follow(tmp_path: Path, command: str) -> subprocess.Popen:
    """``specwatch COMMAND`` following ``tmp_path/a.log``."""
    log = tmp_path / "a.log"
    log.write_text("x\n")
    args = [sys.executable, "-m", "tui", command, str(log)]
    if command == "export":
        args += ["--prometheus", "127.0.0.1:0"]
    # start_new_session: a process group of its own, where SIGINT is not ignored as it is for a
    # background job of a non-interactive shell.
    return subprocess.Popen(
        args, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


STOP_CASES = [
    ("stream", signal.SIGINT, 130, "interrupted"),
    ("stream", signal.SIGTERM, 143, "stopped by SIGTERM"),
    ("stream", signal.SIGHUP, 129, "stopped by SIGHUP"),
    ("export", signal.SIGINT, 130, "interrupted"),
    ("export", signal.SIGTERM, 143, "stopped by SIGTERM"),
]


@pytest.mark.parametrize(
    "command,sig,code,words", STOP_CASES, ids=[f"{c}-{s.name}" for c, s, _, _ in STOP_CASES]
)
def test_stream_and_export_stop_with_one_line(tmp_path, command, sig, code, words):
    proc = _follow(tmp_path, command)
    out, err = stop_when(proc, lambda: reading(tmp_path / "a.log", proc.pid), sig)  # following
    assert proc.returncode == code, err
    assert err.splitlines()[-1] == f"specwatch {command}: {words}", err
    assert "Traceback" not in err


# -- remote summary (a real sshd on 127.0.0.1) -------------------------------------------------------
@pytest.mark.parametrize(
    "sig,code,words", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "stopped by SIGTERM")]
)
def test_remote_summary_stops_with_one_line(home, tmp_path, sig, code, words):
    log = big_log(tmp_path / "big.log")
    env = {**ENV, "HOME": str(home)}
    env.pop("SSH_AUTH_SOCK", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui", "summary", f"logbox:{log}"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    # connected and reading: a process on the host (sshd's) has the log open
    out, err = stop_when(proc, lambda: reading(log), sig)
    assert proc.returncode == code, err
    assert err == f"specwatch summary: {words}\n" and out == ""  # no summary: the read stopped
