"""The app never outlives its terminal (issue 29 item 2).

* **20 terminals killed under the app** (tmux, each trial on a tmux server of its own: never the
  user's): ``kill-server``, ``kill-window`` and ``kill-pane`` in turn, once the app draws (and
  every fifth trial while it starts). The pane's first process is a small wrapper standing for
  the user's shell: it survives the hang-up and records the app's exit status; on even trials it
  passes the SIGHUP on, as a shell does to its jobs, on odd ones it does not (as under nohup: the
  app then sees only EOF / EIO on its terminal). Each time the app must be gone (exited, or a
  zombie) and have exited with 129. The program's own deadline is 1.5 s; the test polls with a
  generous limit (a loaded machine) and prints the times it took.
* **The deadline itself**: a process whose main thread is stuck for good (as Textual's driver
  was, in ``queue.put`` against its writer thread) ends by the deadline with 128 + signal and one
  line, when its terminal (a pty) goes away and on SIGTERM.
"""

from __future__ import annotations

import os
import pty
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from _ci import missing
from _signal_util import alive, handlers_in_place
from _wait import wait_until

ROOT = Path(__file__).resolve().parents[2]
TRIALS = 20
AT_ONCE = 4  # trials side by side (a tmux server each)
GONE_LIMIT = 30.0  # the test's limit for "gone": far above the program's 2 s (a loaded machine)
KILLS = ("kill-server", "kill-window", "kill-pane")

# The pane's first process: the user's shell, for the test (it outlives the terminal).
WRAPPER = """
import os, signal, subprocess, sys
forward, out, cmd = sys.argv[1] == "forward", sys.argv[2], sys.argv[3:]
child = None
def hup(signum, frame):
    if forward and child is not None:
        child.send_signal(signal.SIGHUP)
signal.signal(signal.SIGHUP, hup)
keep = signal.SIG_DFL if forward else signal.SIG_IGN
child = subprocess.Popen(cmd, preexec_fn=lambda: signal.signal(signal.SIGHUP, keep))
with open(out + ".pid", "w") as f:
    f.write(str(child.pid))
code = child.wait()
with open(out + ".tmp", "w") as f:
    f.write(str(code))
os.replace(out + ".tmp", out)
"""


def _tmux(sock: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["tmux", "-S", str(sock), *args], capture_output=True, text=True)


def _gone(pid: int) -> bool:
    return not alive(pid)


def _trial(i: int, tmp: Path) -> tuple[str, float, int]:
    """One terminal killed under the app: (how, seconds until gone, exit status)."""
    d = tmp / f"t{i}"
    (d / "xdg").mkdir(parents=True)
    sock = d / "tmux.sock"
    out = d / "status"
    how = KILLS[i % len(KILLS)]
    forward = "forward" if i % 2 == 0 else "nohup"
    app = [sys.executable, "-m", "tui", "demo", "--speed", "20"]
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-c", WRAPPER, forward, str(out), *app])
    env = (
        f"cd {shlex.quote(str(d))} && unset COLUMNS LINES && XDG_CONFIG_HOME={shlex.quote(str(d / 'xdg'))} "
        f"PYTHONPATH={shlex.quote(str(ROOT))} TERM=xterm-256color exec {cmd}"
    )
    try:
        done = _tmux(sock, "new-session", "-d", "-x", "100", "-y", "30", env)
        assert done.returncode == 0, done.stderr
        pidfile = out.with_name("status.pid")
        pid = int(wait_until(lambda: pidfile.exists() and pidfile.read_text(), what="the app's pid"))
        if i % 5 == 4:  # while it starts: its handlers in place, nothing drawn yet
            wait_until(lambda: handlers_in_place(pid), what="the app's handlers", step=0.002)
        else:
            wait_until(
                lambda: "specwatch demo" in _tmux(sock, "capture-pane", "-p").stdout,
                what="the app on the screen",
                show=lambda: _tmux(sock, "capture-pane", "-p").stdout,
                step=0.1,
            )
        start = time.monotonic()
        if how == "kill-server":
            _tmux(sock, "kill-server")
        else:
            _tmux(sock, how, "-t", "0" if how == "kill-window" else "0.0")
        wait_until(lambda: _gone(pid), GONE_LIMIT, what=f"the app gone after {how}", step=0.01)
        took = time.monotonic() - start
        code = int(wait_until(lambda: out.exists() and out.read_text(), what="the app's exit status"))
        return f"{how}/{forward}{'/start-up' if i % 5 == 4 else ''}", took, code
    finally:
        _tmux(sock, "kill-server")
        if (d / "status.pid").exists():  # never leave one behind, even when the test fails
            pid = int((d / "status.pid").read_text())
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_the_app_never_outlives_its_terminal(tmp_path):
    if shutil.which("tmux") is None:
        missing("tmux is not installed")
    with ThreadPoolExecutor(AT_ONCE) as pool:
        results = list(pool.map(lambda i: _trial(i, tmp_path), range(TRIALS)))
    times = sorted(took for _, took, _ in results)
    print(
        f"\nterminal killed under the app, {TRIALS} trials: gone after "
        f"min {times[0]:.2f} s, median {times[len(times) // 2]:.2f} s, max {times[-1]:.2f} s"
    )
    for how, took, code in results:
        print(f"  {how}: {took:.2f} s, status {code}")
    assert [code for _, _, code in results] == [128 + signal.SIGHUP] * TRIALS, results


STUCK = """
import os, queue
from tui.cli import signals
signals.install(line=lambda signum: "specwatch watch: " + signals.message(signum))
signals.watch_terminal()
os.write(1, b"stuck\\n")  # one write, done once the test reads it (a print could still be flushing)
q = queue.Queue(1)
q.put(None)
q.put(None)  # for good: the queue is full and nobody takes from it
"""


def _stuck_on_a_pty() -> tuple[int, int]:
    """A stuck process on a new pty: (pid, the pty's master end)."""
    pid, master = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.environ["PYTHONPATH"] = str(ROOT)
        os.execv(sys.executable, [sys.executable, "-c", STUCK])
    seen = b""
    while b"stuck" not in seen:
        ready, _, _ = select.select([master], [], [], 60)
        assert ready, f"the child never got going: {seen!r}"
        seen += os.read(master, 1024)
    return pid, master


def _status(pid: int) -> int:
    _, status = wait_until(
        lambda: (got := os.waitpid(pid, os.WNOHANG))[0] and got, what="the stuck process gone"
    )
    return os.waitstatus_to_exitcode(status)


@pytest.mark.parametrize("how", ["terminal closed", "SIGHUP", "SIGTERM", "SIGINT"])
def test_a_stuck_main_thread_still_ends_by_the_deadline(how):
    pid, master = _stuck_on_a_pty()
    try:
        if how == "terminal closed":
            os.close(master)
            master = -1
        else:
            os.kill(pid, getattr(signal, how))
        code = _status(pid)
    finally:
        if master != -1:
            os.close(master)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert code == {"SIGTERM": 143, "SIGINT": 130}.get(how, 129)
