"""Signals end every command cleanly.

* SIGTERM / SIGHUP in the app commands (in a real terminal: tmux): the pane is out of the
  alternate screen with mouse reporting off (as after `q`), exit status 128 + signal.
* Ctrl-C typed into ``summary`` of a large log (scanning threads running): the prompt is back
  within 5 s with one line and no traceback; SIGTERM the same within 1 s.
* ``stream`` and ``export``: Ctrl-C 130, SIGTERM 143, one line on stderr.

With CI=true a missing tmux fails; elsewhere those tests are skipped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _tmux_util import capture, pane

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


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def threads(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# -- tmux --------------------------------------------------------------------------------------
def wait_for(cond, what: str, timeout: float = 20.0, name: str | None = None) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if cond():
            return time.monotonic() - t0
        time.sleep(0.05)
    raise AssertionError(f"{what} never happened" + (f"; the screen was:\n{capture(name)}" if name else ""))


def python_pid(name: str) -> int:
    shell = int(pane(name, "#{pane_pid}"))
    kids: list[int] = []
    wait_for(lambda: bool(kids.extend(children(shell)) or kids), "the command to start", name=name)
    return kids[0]


def stop_after(proc: subprocess.Popen, seconds: float, sig: signal.Signals) -> tuple[str, str, float]:
    """Sends ``sig`` to ``proc`` (still running) after ``seconds``: its stdout, stderr and the
    seconds it took to end (it is killed if it has not ended within 5 s)."""
    try:
        time.sleep(seconds)
        assert proc.poll() is None, proc.communicate()
        t0 = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=5)
        return out, err, time.monotonic() - t0
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
    wait_for(lambda: exit_code(exit_file), "an exit", timeout=10, name=name)
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
    time.sleep(2.0)
    assert not exit_code(exit_file), "the summary ended before Ctrl-C: make the log larger"
    subprocess.run(["tmux", "send-keys", "-t", name, "C-c"], check=True)
    took = wait_for(lambda: exit_code(exit_file), "the prompt back", timeout=5, name=name)
    assert exit_code(exit_file) == "EXIT=130", capture(name)
    screen = capture(name)
    assert "specwatch summary: interrupted" in screen
    assert "Traceback" not in screen and "KeyboardInterrupt" not in screen, screen
    assert took < 5
    assert not any(alive(w) for w in workers)


# -- plain processes ------------------------------------------------------------------------------
def test_sigterm_in_summary_ends_within_1s(tmp_path):
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
        time.sleep(0.5)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=5)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143
    assert err == "specwatch summary: stopped by SIGTERM\n" and out == ""
    assert took < 1.0
    wait_for(lambda: not any(alive(w) for w in workers), "the workers to end", timeout=1.0)


def _follow(tmp_path: Path, command: str) -> subprocess.Popen:
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
    out, err, took = stop_after(proc, 1.5, sig)  # started and following
    assert proc.returncode == code, err
    assert err.splitlines()[-1] == f"specwatch {command}: {words}", err
    assert "Traceback" not in err
    assert took < 1.0


# -- remote summary (a real sshd on 127.0.0.1) -------------------------------------------------------
@pytest.mark.parametrize(
    "sig,code,words", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "stopped by SIGTERM")]
)
def test_remote_summary_stops_within_1s(home, tmp_path, sig, code, words):
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
    out, err, took = stop_after(
        proc, 2.0, sig
    )  # connected and reading (the whole file takes several seconds)
    assert proc.returncode == code, err
    assert err == f"specwatch summary: {words}\n" and out == ""
    assert took < 1.0
