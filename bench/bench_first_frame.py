"""First frame of ``replay`` / ``watch``: time from process start to the first screen that shows
the pane's label, in a real terminal (tmux), against a bare Python start in the same terminal.

    python bench/bench_first_frame.py [--reps 7] [--size 100x30] [--other DIR]

Steps:
1. Copy ``sample_logs/ab_a.log`` to a temporary file with a name of its own (the label to wait for).
2. Run, alternately and ``--reps`` times each, in a new detached tmux session of ``--size``, from
   the repository root with ``sys.executable`` (``PYTHONPATH`` the checkout, ``XDG_CONFIG_HOME``
   an empty directory, ``TERM=xterm-256color``):
   * baseline: ``python -c 'print("first-frame-ready")'``, waited for until that text shows;
   * ``python -m tui replay --max FILE`` and ``python -m tui watch FILE``, waited for until the
     label shows in a pane header line (``● NAME``).
   The clock starts just before ``tmux new-session`` and stops at the first ``capture-pane``
   (polled every 10 ms) that shows the text; the session is then killed.
3. Print best and median per command, the medians minus the baseline's median (what the app
   itself costs), and the target: replay and watch first frame <= 0.7 s (median, absolute: it is
   what a user waits for; the baseline says how loaded the machine was).
4. With ``--other DIR``, also time ``replay`` of another checkout (e.g. /work/main) in the same
   run, to compare before and after.

Exit status: 0 if every run showed its text within 20 s (a missed target is reported, not an
error), 2 otherwise. The machine is shared and noisy: compare numbers measured in one run.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_logs" / "ab_a.log"
TARGET = 0.7
TIMEOUT = 20.0


def capture(name: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout


def first_frame(cmd: list[str], wait_for: str, env: str, size: tuple[int, int], cwd: Path) -> float | None:
    """Seconds from starting ``cmd`` in a new tmux session to the first capture showing ``wait_for``."""
    name = f"specwatch-bench-{uuid.uuid4().hex[:8]}"
    script = f"cd {shlex.quote(str(cwd))} && {env} {' '.join(shlex.quote(a) for a in cmd)}; sleep 30"
    t0 = time.perf_counter()
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", str(size[0]), "-y", str(size[1]), script], check=True
    )
    try:
        while time.perf_counter() - t0 < TIMEOUT:
            if wait_for in capture(name):
                return time.perf_counter() - t0
            time.sleep(0.01)
        return None
    finally:
        apps = _children(_pane_pid(name))
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        _reap(apps)  # the app can outlive its terminal: never leave one running (it skews later runs)


def _pane_pid(name: str) -> int:
    out = subprocess.run(
        ["tmux", "display-message", "-p", "-t", name, "#{pane_pid}"], capture_output=True, text=True
    )
    return int(out.stdout.strip() or 0)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (the app under the session's shell)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        if pid and text[text.rfind(")") + 2 :].split()[1] == str(pid):
            found.append(int(stat.parent.name))
    return found


def _reap(pids: list[int], grace: float = 2.0) -> None:
    end = time.monotonic() + grace
    while pids and time.monotonic() < end:
        pids = [p for p in pids if os.path.exists(f"/proc/{p}")]
        time.sleep(0.05)
    for p in pids:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                break
            time.sleep(0.5)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--size", default="100x30")
    ap.add_argument("--other", help="another checkout to time too (its tui package, via PYTHONPATH)")
    args = ap.parse_args()
    if shutil.which("tmux") is None:
        print("tmux is required", file=sys.stderr)
        return 2
    w, h = (int(x) for x in args.size.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "first-frame-bench.log"
        log.write_bytes(SAMPLE.read_bytes())
        xdg = Path(tmp) / "xdg"
        xdg.mkdir()

        def env(root: Path) -> str:
            return (
                f"unset COLUMNS LINES; PYTHONPATH={shlex.quote(str(root))} "
                f"XDG_CONFIG_HOME={shlex.quote(str(xdg))} TERM=xterm-256color"
            )

        label = f"● {log.name}"
        runs: dict[str, tuple[list[str], str, str, Path]] = {
            "baseline (python -c print)": (
                [sys.executable, "-c", "print('first-frame-' + 'ready')"],
                "first-frame-ready",
                env(ROOT),
                ROOT,
            ),
            "replay --max": (
                [sys.executable, "-m", "tui", "replay", "--max", str(log)],
                label,
                env(ROOT),
                ROOT,
            ),
            "watch": ([sys.executable, "-m", "tui", "watch", str(log)], label, env(ROOT), ROOT),
        }
        if args.other:
            other = Path(args.other).resolve()
            runs[f"replay --max ({other})"] = (
                [sys.executable, "-m", "tui", "replay", "--max", str(log)],
                label,
                env(other),
                other,
            )
        times: dict[str, list[float]] = {k: [] for k in runs}
        failed = False
        # one idle session for the whole run: the tmux server does not exit (and restart)
        # between two runs, which would be timed too
        keep = f"specwatch-bench-keep-{uuid.uuid4().hex[:8]}"
        subprocess.run(["tmux", "new-session", "-d", "-s", keep, "sleep 3600"], check=True)
        try:
            for _ in range(args.reps):
                for key, (cmd, text, e, cwd) in runs.items():
                    t = first_frame(cmd, text, e, (w, h), cwd)
                    if t is None:
                        print(f"{key}: {text!r} not shown within {TIMEOUT:g} s", file=sys.stderr)
                        failed = True
                    else:
                        times[key].append(t)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", keep], capture_output=True)
    base = statistics.median(times["baseline (python -c print)"] or [0.0])
    print(f"first frame at {w}x{h}, {args.reps} runs each (seconds from tmux new-session):")
    for key, ts in times.items():
        if not ts:
            continue
        med = statistics.median(ts)
        extra = "" if key.startswith("baseline") else f"   app cost (median - baseline) {med - base:.3f}"
        print(f"  {key:<40} best {min(ts):.3f}  median {med:.3f}{extra}")
    for key in ("replay --max", "watch"):
        if times[key]:
            med = statistics.median(times[key])
            print(f"target {key}: median {med:.3f} s <= {TARGET} s: {'met' if med <= TARGET else 'MISSED'}")
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
