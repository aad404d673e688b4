"""The signal matrix of tests/integration/test_signal_matrix.py, many times per cell, to catch
rare races: {app, summary, summary over SSH, stream, export, fleet} × {INT, TERM, HUP} × {start-up,
running, shutting down}.

    python bench/bench_signal_matrix.py [--repeats 50] [--only stream,export] [--phases running]
                                        [--spread 1.0]

Needs tmux (the app) and Debian's sshd (summary over SSH; started on 127.0.0.1 for the run). Each
run is judged as in the test (tests/_signal_util.py): exit status 128 + signal, exactly one line,
no traceback, no process left, the terminal as it was. Prints one row per cell (clean runs / runs)
and every unclean run; exit status 0 when every run was clean, 1 otherwise. A start-up signal
is sent a random 0–``--spread`` seconds after specwatch's handlers are in place (the test sends
it at once), so that the runs land all over the start-up: imports, parsing, opening the sources,
the event loop and the app being made.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from _signal_util import PHASES, SIGNALS, big_log, first_signal, run_app, run_process  # noqa: E402
from _tmux_util import kill_session, start_session  # noqa: E402

COMMANDS = ("app", "summary", "summary-ssh", "stream", "export", "fleet")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--only", default=",".join(COMMANDS), help="commands, comma-separated")
    ap.add_argument("--phases", default=",".join(PHASES))
    ap.add_argument("--signals", default="INT,TERM,HUP")
    ap.add_argument("--spread", type=float, default=1.0, help="start-up signals: a random wait up to this")
    opts = ap.parse_args()
    # Ctrl-C / kill: the finally below still stops sshd and the tmux sessions (as a background
    # job this process may have SIGINT ignored; the commands it runs get the default back)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    commands = opts.only.split(",")
    phases = opts.phases.split(",")
    sigs = [s for s in SIGNALS if signal.Signals(s).name[3:] in opts.signals.split(",")]
    rnd = random.Random(23)

    def spread() -> None:
        time.sleep(rnd.uniform(0, opts.spread))

    tmp = Path(tempfile.mkdtemp(prefix="specwatch-signals-"))
    sshd = home = None
    sessions: list[str] = []
    try:
        big = big_log(tmp / "big.log") if any(c.startswith("summary") for c in commands) else None
        if "summary-ssh" in commands:
            from _ssh_util import Sshd, user_home

            (tmp / "sshd").mkdir()
            sshd = Sshd(tmp / "sshd")
            sshd.start()
            home = user_home(tmp / "home", sshd)

        def tmux(args: list[str], d: Path) -> tuple[str, Path]:
            name, exit_file = start_session(args, d)
            sessions.append(name)
            return name, exit_file

        total = clean = 0
        print(f"{'command':12} {'phase':9} {'signal':7} clean/runs")
        for command in commands:
            for phase in phases:
                for sig in sigs:
                    ok = 0
                    for i in range(opts.repeats):
                        d = tmp / f"{command}-{phase}-{sig}-{i}"
                        d.mkdir()
                        if big is not None and command.startswith("summary"):
                            os.symlink(big, d / "big.log")
                        if command == "app":
                            out = run_app(tmux, sig, phase, d, repeat=i, spread=spread)
                            for name in sessions:
                                kill_session(name)
                            sessions.clear()
                        else:
                            out = run_process(command, sig, phase, d, repeat=i, home=home, spread=spread)
                        alt = sig if phase == "shutdown" and i % 2 == 0 else None
                        name = "watch" if command == "app" else command.split("-")[0]
                        bad = out.problems(name, first_signal(sig, phase), alt)
                        if bad:
                            print(f"  {command} {phase} {signal.Signals(sig).name} run {i}: {bad}")
                        else:
                            ok += 1
                        shutil.rmtree(d, ignore_errors=True)
                    total += opts.repeats
                    clean += ok
                    print(
                        f"{command:12} {phase:9} {signal.Signals(sig).name:7} {ok}/{opts.repeats}", flush=True
                    )
        print(f"all: {clean}/{total} clean")
        return 0 if clean == total else 1
    finally:
        for name in sessions:
            kill_session(name)
        if sshd is not None:
            sshd.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
