"""One cell of the signal matrix (tests/integration/test_signal_matrix.py, bench/bench_signal_matrix.py):
a specwatch command, a stop signal and the phase it arrives in.

* ``startup``: as soon as specwatch's handlers are in place (``/proc/PID/status`` shows SIGTERM
  caught: the first line of ``main()`` ran), before the command is running; for the app on odd
  repeats once its event loop exists (an epoll descriptor: the app about to start and mount);
* ``running``: once the command shows it works (a first record printed, /metrics served, the
  scanning threads, the remote file open, the app's first numbers);
* ``shutdown``: while the command is stopping: another signal stopped it when it was running and
  this one follows — at once (the clean-up is under way) on even repeats, once the stop line is
  out (the process exiting) on odd ones. The exit status and the line are the first signal's
  (sent at once, both may be pending together: then either one's, status and line agreeing).

Each run must end with 128 + the (first) signal, exactly one line (``specwatch CMD: interrupted``
or ``stopped by SIGNAME``) and nothing else on stderr, no process left in its group; the app, run
in tmux, must leave the terminal as it found it (``#{alternate_on}``, ``#{mouse_any_flag}``,
``#{pane_title}``).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from _tmux_util import capture, exit_status, pane
from _wait import DEADLINE, wait_until

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
PHASES = ("startup", "running", "shutdown")
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
STEP = 0.002  # a look at the process every 2 ms: start-up lasts a few hundred


def words(sig: int) -> str:
    return "interrupted" if sig == signal.SIGINT else f"stopped by {signal.Signals(sig).name}"


def first_signal(sig: int, phase: str) -> int:
    """The signal that stops the command: ``sig`` itself, or in the shutdown phase another one
    (``sig`` then arrives while it stops)."""
    if phase != "shutdown":
        return sig
    return signal.SIGTERM if sig != signal.SIGTERM else signal.SIGINT


def handlers_in_place(pid: int) -> bool:
    """specwatch's stop-signal handlers are installed in ``pid`` (SIGTERM is caught)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    return False


def has_event_loop(pid: int) -> bool:
    """``pid`` has an epoll descriptor open: its event loop has been made."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:[eventpoll]":
                return True
        except OSError:
            continue
    return False


def threads(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def reading(path: Path) -> bool:
    """Some process has ``path`` open (sshd's cat of the remote log)."""
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
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


def group_members(pgid: int) -> list[int]:
    """Live processes (not zombies) in process group ``pgid``."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(p))
    return out


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def metrics_served(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
            return b"specwatch_" in r.read()
    except OSError:
        return False


def big_log(path: Path, size: int = 56 << 20) -> Path:
    """A vLLM log whose lines take the line parser's path (two processes interleaved): summary
    scans it for seconds, long enough to be stopped while running."""
    line = (
        "(APIServer pid={pid}) INFO 11-20 11:02:{s:02d} [metrics.py:101] SpecDecoding metrics: Mean "
        "acceptance length: 2.{n:02d}, Accepted throughput: 195.10 tokens/s, Drafted throughput: 316.80 "
        "tokens/s, Accepted: 1951 tokens, Drafted: 3168 tokens, Per-position acceptance rate: 0.847, "
        "0.573, 0.428, Avg Draft acceptance rate: 61.6%\n"
    )
    block = "".join(line.format(pid=4321 + i % 2, s=i % 60, n=i % 100) for i in range(2000)).encode()
    with open(path, "wb") as f:
        for _ in range(size // len(block) + 1):
            f.write(block)
    return path


@dataclass
class Outcome:
    code: int | None
    stderr: str
    stdout: str = ""
    left: list[int] = field(default_factory=list)  # processes left in the command's group
    terminal: str = ""  # the app: "alternate mouse title" after the exit
    terminal_before: str = ""

    def problems(self, command: str, sig: int, alt: int | None = None) -> list[str]:
        """What is wrong with this run (empty: clean). With ``alt``, two signals were pending at
        once and either may be the one that stopped the command (the kernel runs the handler of
        the one delivered last first): the status and the line must agree."""
        if alt is not None and self.code == 128 + alt:
            sig = alt
        want = f"specwatch {command}: {words(sig)}"
        bad = []
        if self.code != 128 + sig:
            bad.append(f"exit status {self.code}, not {128 + sig}")
        lines = [ln for ln in self.stderr.splitlines() if ln.strip()]
        if lines != [want]:
            bad.append(f"stderr {lines!r}, not [{want!r}]")
        if "Traceback" in self.stderr + self.stdout or "never awaited" in self.stderr:
            bad.append("a traceback")
        if self.left:
            bad.append(f"processes left: {self.left}")
        if self.terminal != self.terminal_before:
            bad.append(f"terminal {self.terminal!r}, not {self.terminal_before!r}")
        return bad


class SilentServer:
    """A TCP server on 127.0.0.1 that accepts connections and never answers (a Prometheus that
    hangs): ``fleet`` is running while it waits for the answer."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            self.accepted += 1

    def close(self) -> None:
        self.sock.close()
        for c in self.conns:
            c.close()


class _Lines:
    """A pipe's lines, read in a thread."""

    def __init__(self, pipe) -> None:
        self.lines: list[str] = []
        self._t = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._t.start()

    def _read(self, pipe) -> None:
        for line in pipe:
            self.lines.append(line)

    def text(self) -> str:
        self._t.join(DEADLINE)
        return "".join(self.lines)


def _env(home: Path | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SSH_AUTH_SOCK", None)
    if home is not None:
        env["HOME"] = str(home)
    return env


def _send_in_phase(
    pid: int, sig: int, phase: str, running, stop_line_out, spread=None, starting=None
) -> None:
    """Sends ``sig`` to ``pid`` in ``phase`` (``running()``: the command works; ``stop_line_out()``:
    its stop line is printed); the shutdown phase's first signal too. ``spread()`` is called
    between the handlers' installation and a start-up signal (the bench waits a random time
    there, to land anywhere in the start-up); else ``starting()`` is waited for (the app: its
    terminal set up, its screen being mounted)."""
    if phase == "startup":
        wait_until(lambda: handlers_in_place(pid), what="specwatch's signal handlers", step=STEP)
        if spread is not None:
            spread()
        elif starting is not None:
            wait_until(starting, what="the command to be starting", step=STEP)
        os.kill(pid, sig)
        return
    wait_until(running, what="the command to run")
    first = first_signal(sig, phase)
    os.kill(pid, first)  # a process already gone: ProcessLookupError (it ended on its own)
    if phase == "shutdown":
        if stop_line_out is not None:
            wait_until(stop_line_out, what="the stop line", step=STEP)
        try:
            os.kill(pid, sig)
        except ProcessLookupError:  # already gone: nothing left to disturb
            pass


def _default_signals() -> None:
    for sig in SIGNALS:
        signal.signal(sig, signal.SIG_DFL)


def run_process(
    command: str, sig: int, phase: str, tmp: Path, *, repeat: int = 0, home: Path | None = None, spread=None
) -> Outcome:
    """One run of ``specwatch COMMAND`` as a plain process (summary, summary-ssh, stream, export,
    fleet)."""
    log = tmp / "a.log"
    cmd = [sys.executable, "-m", "tui"]
    running = None
    proc: subprocess.Popen
    if command == "summary":
        log = tmp / "big.log"
        cmd += ["summary", str(log)]
    elif command == "summary-ssh":
        log = tmp / "big.log"
        cmd += ["summary", f"logbox:{log}"]
    elif command == "stream":
        log.write_bytes((SAMPLES / "ab_a.log").read_bytes())
        cmd += ["stream", str(log)]
    elif command == "fleet":
        silent = SilentServer()
        cmd += ["fleet", "--json", f"http://127.0.0.1:{silent.port}"]
    elif command == "export":
        from _ssh_util import free_port

        port = free_port()
        log.write_bytes((SAMPLES / "ab_a.log").read_bytes())
        cmd += ["export", "--quiet", "--prometheus", f"127.0.0.1:{port}", str(log)]
    # a process group of its own (what is left of it afterwards can be found), the stop signals
    # at their default as a shell gives them to a command in the foreground (run from a
    # background job, this process may ignore SIGINT, and an ignored signal stays ignored)
    proc = subprocess.Popen(
        cmd,
        preexec_fn=_default_signals,
        env=_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    out, err = _Lines(proc.stdout), _Lines(proc.stderr)
    if command == "summary":
        running = lambda: threads(proc.pid) >= 2  # noqa: E731
    elif command == "summary-ssh":
        running = lambda: reading(log.resolve())  # noqa: E731
    elif command == "stream":
        running = lambda: bool(out.lines)  # noqa: E731
    elif command == "fleet":
        running = lambda: silent.accepted > 0  # noqa: E731  (asking Prometheus, waiting for its answer)
    else:
        running = lambda: metrics_served(port)  # noqa: E731
    line_out = (lambda: bool(err.lines)) if repeat % 2 else None
    try:
        _send_in_phase(proc.pid, sig, phase, lambda: running() or proc.poll() is not None, line_out, spread)
        proc.wait(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if command == "fleet":
            silent.close()
    left = wait_until_gone(proc.pid)
    return Outcome(proc.returncode, err.text(), out.text(), left)


def wait_until_gone(pgid: int) -> list[int]:
    """The processes of group ``pgid`` still there after a generous wait (empty when clean)."""
    try:
        wait_until(lambda: not group_members(pgid), deadline=10, what="the process group to end")
    except AssertionError:
        return group_members(pgid)
    return []


def run_app(tmux, sig: int, phase: str, tmp: Path, *, repeat: int = 0, spread=None) -> Outcome:
    """One run of ``specwatch watch`` in a tmux session (the ``tmux`` fixture's ``start``)."""
    log = tmp / "a.log"
    log.write_bytes((SAMPLES / "ab_a.log").read_bytes())
    name, exit_file = tmux(["watch", str(log)], tmp)
    fmt = "#{alternate_on} #{mouse_any_flag} #{pane_title}"
    before = pane(name, fmt)
    shell = int(pane(name, "#{pane_pid}"))
    kids: list[int] = []
    wait_until(lambda: bool(kids.extend(children(shell)) or kids), what="the command to start", step=STEP)
    pid = kids[0]
    ended = lambda: bool(exit_status(exit_file))  # noqa: E731
    drawn = lambda: "records" in capture(name) or ended()  # noqa: E731
    line_out = (lambda: "specwatch watch:" in capture(name) or ended()) if repeat % 2 else None
    # start-up, odd repeats: once the event loop exists (the app about to start and mount)
    mounting = (lambda: has_event_loop(pid) or ended()) if repeat % 2 else None
    _send_in_phase(pid, sig, phase, drawn, line_out, spread, mounting)
    wait_until(ended, what="an exit", show=lambda: "\n" + capture(name))
    status = exit_status(exit_file)
    code = int(status.split("=", 1)[1]) if status.startswith("EXIT=") else None
    screen = capture(name)
    return Outcome(
        code,
        screen,
        left=[pid] if alive(pid) else [],
        terminal=pane(name, fmt),
        terminal_before=before,
    )
