"""Ctrl-C typed into ``specwatch summary`` of a large log, in a real terminal: how long until the
prompt is back, and what the terminal shows.

    python bench/bench_interrupt.py [--lines 5000000] [--after 2.0] [--reps 3] [--keep]

1. Make sure ``bench/out/large_<N>.log`` exists (``tools/gen_sample_logs.py --large N``, reused
   when present; deleted at the end without ``--keep``).
2. In a private tmux server (its own socket), run ``python -m tui summary FILE`` in a shell, type
   Ctrl-C ``--after`` seconds later, and time until the shell has written the exit status.
3. Report each run: seconds from Ctrl-C to the prompt, the exit status, whether the screen shows a
   traceback. Targets: prompt back within 5 s, exit status 130, one line, no traceback.

Exit status: 0 when every run meets the targets, 1 otherwise, 2 when the summary ended before
the Ctrl-C (use a larger log).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from _logs import large_log  # bench/ is the script's directory, first on sys.path

ROOT = Path(__file__).resolve().parent.parent


def one_run(log: Path, after: float, tmp: Path) -> tuple[float | None, str, str]:
    sock = f"specwatch-bench-{uuid.uuid4().hex[:8]}"
    status = tmp / f"{sock}.exit"
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "tui", "summary", str(log)])
    script = f"cd {shlex.quote(str(ROOT))} && {cmd}; echo $? > {shlex.quote(str(status))}; sleep 30"

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True).stdout

    subprocess.run(
        [
            "tmux",
            "-L",
            sock,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "b",
            "-x",
            "120",
            "-y",
            "30",
            script,
        ],
        check=True,
    )
    try:
        time.sleep(after)
        if status.exists():
            return None, status.read_text().strip(), tmux("capture-pane", "-p", "-t", "b")
        t0 = time.monotonic()
        tmux("send-keys", "-t", "b", "C-c")
        while not (status.exists() and status.read_text().strip()):
            if time.monotonic() - t0 > 30:
                break
            time.sleep(0.01)
        took = time.monotonic() - t0
        return (
            took,
            status.read_text().strip() if status.exists() else "",
            tmux("capture-pane", "-p", "-t", "b"),
        )
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=5_000_000)
    ap.add_argument("--after", type=float, default=2.0, help="seconds before Ctrl-C")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="keep the generated log")
    args = ap.parse_args()
    log = large_log(args.lines)
    ok = True
    try:
        with tempfile.TemporaryDirectory() as d:
            for i in range(args.reps):
                took, code, screen = one_run(log, args.after, Path(d))
                if took is None:
                    print(f"run {i + 1}: the summary ended before Ctrl-C (exit {code}): use a larger log")
                    return 2
                shown = [line for line in screen.splitlines() if line.strip()]
                trace = "Traceback" in screen or "KeyboardInterrupt" in screen
                good = took <= 5.0 and code == "130" and not trace and len(shown) == 1
                ok &= good
                print(
                    f"run {i + 1}: prompt back {took:.3f} s after Ctrl-C, exit {code}, "
                    f"{len(shown)} line(s) shown{', TRACEBACK' if trace else ''}: {shown[-1:]}"
                    f"  [{'ok' if good else 'MISSED'}: ≤ 5 s, exit 130, one line]"
                )
    finally:
        if not args.keep:
            log.unlink(missing_ok=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
