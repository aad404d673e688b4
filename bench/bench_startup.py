"""Start-up cost: ``specwatch summary`` of a 2,000-line log against a bare Python start.

    python bench/bench_startup.py [--lines 2000] [--reps 15]

Steps:
1. Write the first ``--lines`` lines of ``sample_logs/sglang_eagle3_restart.log`` (repeated if
   it is shorter) to a temporary file.
2. Run, alternately and ``--reps`` times each, from the repository root with ``sys.executable``:
   * baseline: ``python -c 'import json'``;
   * ``python -m tui summary FILE`` (text) and ``python -m tui summary --json FILE``.
   Each run is timed from fork to exit (wall clock) and by the CPU time it used (user + system,
   from ``os.wait4``: steadier than wall time on a loaded machine), its output discarded. The environment is
   the caller's, with ``XDG_CONFIG_HOME`` pointed at an empty directory (no specwatch.toml).
3. Print best and median per command and the ratios summary / baseline (wall: of the medians
   and of the bests; CPU: of the medians), next to the target: wall-median ratio <= 5.
4. With ``--other DIR``, also time ``summary FILE`` of another checkout (its ``tui`` package,
   via PYTHONPATH), e.g. the main branch, to compare before and after in one run.
5. With ``--imports``, also print the 15 slowest imports of one ``summary`` run
   (``python -X importtime``), to see what to trim.

Exit status: 0 if every command succeeded (a missed target is reported, not an error), 2 if one
failed. The machine is shared and noisy: compare ratios measured in one run, never absolute times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_logs" / "sglang_eagle3_restart.log"
TARGET = 5.0


def make_log(path: Path, lines: int) -> None:
    src = SAMPLE.read_bytes().splitlines(keepends=True)
    out = [src[i % len(src)] for i in range(lines)]
    path.write_bytes(b"".join(out))


def timed(cmd: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system of the process and its children)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    dt = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"bench_startup: {' '.join(cmd)} failed ({proc.returncode}): {err.decode()[-500:]}")
    return dt, usage.ru_utime + usage.ru_stime


def slowest_imports(cmd: list[str], env: dict[str, str], n: int = 15) -> list[str]:
    r = subprocess.run(
        [cmd[0], "-X", "importtime", *cmd[1:]], cwd=ROOT, env=env, capture_output=True, text=True
    )
    rows = []
    for line in r.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, cum, name = line[len("import time:") :].split("|")
            rows.append((int(cum), name.rstrip()))
    rows.sort(reverse=True)
    return [f"{cum / 1000:8.1f} ms  {name}" for cum, name in rows[:n]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--imports", action="store_true", help="also list the slowest imports of summary")
    ap.add_argument("--other", metavar="DIR", help="also time summary FILE of the checkout in DIR")
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="specwatch-bench-") as tmp:
        log = Path(tmp) / "startup.log"
        make_log(log, args.lines)
        (Path(tmp) / "xdg").mkdir()
        env = {**os.environ, "XDG_CONFIG_HOME": str(Path(tmp) / "xdg")}
        env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        cmds = {
            "python -c 'import json'": [py, "-c", "import json"],
            "summary FILE": [py, "-m", "tui", "summary", str(log)],
            "summary --json FILE": [py, "-m", "tui", "summary", "--json", str(log)],
        }
        envs = {name: env for name in cmds}
        cwds = {name: ROOT for name in cmds}
        if args.other:  # run in that directory: ``-m`` puts the current directory first on sys.path
            other = f"summary FILE ({args.other})"
            cmds[other] = cmds["summary FILE"]
            envs[other] = {**env, "PYTHONPATH": os.path.abspath(args.other)}
            cwds[other] = Path(os.path.abspath(args.other))
        times: dict[str, list[float]] = {k: [] for k in cmds}
        cpu: dict[str, list[float]] = {k: [] for k in cmds}
        for name, cmd in cmds.items():  # warm the page cache and the bytecode caches
            timed(cmd, envs[name], cwds[name])
        for _ in range(args.reps):
            for name, cmd in cmds.items():
                wall, used = timed(cmd, envs[name], cwds[name])
                times[name].append(wall)
                cpu[name].append(used)
        base = "python -c 'import json'"
        print(f"{args.lines}-line log, {args.reps} runs each, alternating ({py})")
        for name, ts in times.items():
            print(
                f"  {name:34s} wall best {min(ts) * 1000:6.1f} ms, median {statistics.median(ts) * 1000:6.1f} ms;"
                f" CPU median {statistics.median(cpu[name]) * 1000:6.1f} ms"
            )
        for name in cmds:
            if name == base:
                continue
            med = statistics.median(times[name]) / statistics.median(times[base])
            best = min(times[name]) / min(times[base])
            cpu_med = statistics.median(cpu[name]) / statistics.median(cpu[base])
            verdict = "ok" if med <= TARGET else "MISSED"
            print(
                f"  ratio {name} / import json: wall median {med:.2f}x, best {best:.2f}x; "
                f"CPU median {cpu_med:.2f}x (target <= {TARGET:g}x, wall median: {verdict})"
            )
        if args.imports:
            print("slowest imports of summary FILE (cumulative):")
            for row in slowest_imports(cmds["summary FILE"], env):
                print("  " + row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
