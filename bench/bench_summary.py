"""Benchmark ``specwatch summary --json`` against a grep|awk baseline on a large log.

    python bench/bench_summary.py [--format sglang|vllm] [--lines N] [--reps 3] [--keep]

``--format sglang`` (default, 5,000,000 lines): ``tools/gen_sample_logs.py --large N`` writes
``bench/out/large_<N>.log`` (a server_args line plus N lines, mostly ``Decode batch``); the
baseline is ``grep 'Decode batch' | awk`` on ``accept len``.
``--format vllm`` (3,000,000 lines): ``bench/gen_vllm_log.py`` writes ``bench/out/vllm_<N>.log``
(2 startup lines plus N: per 10 lines one ``Engine 000``, one ``SpecDecoding metrics``, eight
HTTP access lines); the baseline is ``grep 'SpecDecoding metrics' | awk`` on
``Mean acceptance length``.

Steps:
1. Make sure the log exists (an existing file is reused if it has the expected line count).
   Without ``--keep`` the file is deleted at the end.
2. Read the file once untimed, so both commands start with it in the page cache.
3. Run the two commands alternately, ``--reps`` times each:
   * baseline: ``grep ANCHOR FILE | awk -F'FIELD: ' '{split($2,a,","); s+=a[1]; n++}
     END {printf "%.6f %d\\n", s/n, n}'``, run through bash.
   * ours: ``python -m tui summary --json FILE``. It uses ``sys.executable``, in the repository
     root, so the console script is not needed.

   Each command runs under a small Python launcher, which times it (the launcher's own startup
   is not counted) and reaps it with ``os.wait4``. The launcher's ru_maxrss is the
   **largest single process** in the command's tree. Linux folds the maxrss of every reaped
   descendant into it, so this covers worker processes too. It has a floor of about 14 MB,
   the launcher's own RSS: Linux folds the pre-exec memory of the forked child into the
   child's maxrss.
   Meanwhile a thread here samples the **sum of VmRSS over the command's process tree**
   (found through ``/proc/PID/task/*/children``) every 20 ms. Shared pages are counted once
   per process, so forked workers can make the sum exceed the true footprint.
4. Check that both commands agree: the same n, and means equal to within 1e-6 (awk prints 6
   decimals). Then print best and median times, the ratio ours/baseline (best of N), and the
   peak memory, next to the targets: ratio <= 1.5, RSS <= 150 MB.

Exit status: 0 if the answers agree, 1 if they disagree, 2 if a command failed. Missed targets
are reported but do not change the exit status.

``--tree DIR`` (repeatable) also runs ``python -m tui summary --json FILE`` from another checkout
(its own build), alternately with the others in the same run and on the same file, and reports
it next to ours (ratio to ours, answers checked the same way): a before/after comparison that the
machine's load cannot skew much.

``--ours-cmd`` replaces our command (``{file}`` is substituted, and the command is run without a
shell) in order to test this script itself. The stand-in must print the same JSON shape as ours.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
GEN = ROOT / "tools" / "gen_sample_logs.py"
GEN_VLLM = ROOT / "bench" / "gen_vllm_log.py"
AWK = '\'{{split($2,a,","); s+=a[1]; n++}} END {{printf "%.6f %d\\n", s/n, n}}\''
BASELINE = "grep 'Decode batch' {file} | awk -F'accept len: ' " + AWK
BASELINE_VLLM = "grep 'SpecDecoding metrics' {file} | awk -F'Mean acceptance length: ' " + AWK
TARGET_RATIO, TARGET_RSS_MB = 1.5, 150.0

# Runs argv[2:], then writes {"elapsed", "rc", "maxrss_kb"} to argv[1]. Stdout and stderr are inherited.
LAUNCHER = r"""
import json, os, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[2:])
_, status, ru = os.wait4(p.pid, 0)
elapsed = time.perf_counter() - t0
p.returncode = os.waitstatus_to_exitcode(status)
with open(sys.argv[1], "w") as f:
    json.dump({"elapsed": elapsed, "rc": p.returncode, "maxrss_kb": ru.ru_maxrss}, f)
"""


def count_lines(path: Path) -> int:
    n = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            n += chunk.count(b"\n")
    return n


def ensure_log(n: int, fmt: str = "sglang") -> Path:
    path = OUT / (f"large_{n}.log" if fmt == "sglang" else f"vllm_{n}.log")
    header = 1 if fmt == "sglang" else 2
    if path.exists() and count_lines(path) == n + header:
        print(f"reusing {path.relative_to(ROOT)}")
        return path
    print(f"generating {path.relative_to(ROOT)} ({n:,} lines) ...", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if fmt == "sglang":
        cmd = [sys.executable, str(GEN), "--large", str(n), "--out", str(path)]
    else:
        cmd = [sys.executable, str(GEN_VLLM), "--lines", str(n), "--out", str(path)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    print(f"  done in {time.perf_counter() - t0:.1f} s")
    return path


# ---------------------------------------------------------------------------------- memory
def _vmrss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return 0  # gone, or a zombie (no VmRSS line)


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    kids.extend(int(x) for x in f.read().split())
            except (FileNotFoundError, ProcessLookupError):
                pass
    except (FileNotFoundError, ProcessLookupError):
        pass
    return kids


def tree_rss_kb(root: int, include_root: bool = True) -> tuple[int, int]:
    """(sum of VmRSS over ``root`` and all its descendants, number of processes counted)."""
    total, count, stack, seen = 0, 0, [root], set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        if pid != root or include_root:
            rss = _vmrss_kb(pid)
            total, count = total + rss, count + (rss > 0)
        stack.extend(_children(pid))
    return total, count


class TreeSampler(threading.Thread):
    """Samples tree_rss_kb(root) every ``interval`` seconds until stop(). Records the peak."""

    def __init__(self, root: int, include_root: bool = True, interval: float = 0.02):
        super().__init__(daemon=True)
        self.root, self.include_root, self.interval = root, include_root, interval
        self.peak_kb = self.peak_procs = self.samples = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            kb, procs = tree_rss_kb(self.root, self.include_root)
            self.samples += 1
            if kb > self.peak_kb:
                self.peak_kb = kb
            self.peak_procs = max(self.peak_procs, procs)
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


# ---------------------------------------------------------------------------------- runs
def measure(argv: list[str], cwd: Path = ROOT) -> dict:
    """Run argv under the launcher. Returns elapsed, rc, stdout, stderr, maxrss_kb, tree_peak_kb."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as report:
        proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER, report.name, *argv],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        sampler = TreeSampler(proc.pid, include_root=False)  # the launcher itself is not counted
        sampler.start()
        out, err = proc.communicate()
        sampler.stop()
        try:
            info = json.load(report)
        except json.JSONDecodeError:
            info = {"elapsed": float("nan"), "rc": proc.returncode, "maxrss_kb": 0}
    info.update(
        stdout=out.decode(errors="replace"),
        stderr=err.decode(errors="replace"),
        tree_peak_kb=sampler.peak_kb,
        tree_peak_procs=sampler.peak_procs,
        samples=sampler.samples,
    )
    return info


def parse_baseline(out: str) -> tuple[int, float]:
    mean, n = out.split()
    return int(n), float(mean)


def parse_ours(out: str) -> tuple[int, float]:
    data = json.loads(out)
    sources = data["sources"]
    if len(sources) != 1:
        raise ValueError(f"expected 1 source, got {len(sources)}")
    al = sources[0]["accept_len"]
    return int(al["n"]), float(al["mean"])


def fmt_mb(kb: int) -> str:
    return f"{kb / 1024:.1f} MB"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Benchmark specwatch summary --json against grep|awk.")
    ap.add_argument("--format", choices=("sglang", "vllm"), default="sglang", help="the log (default sglang)")
    ap.add_argument(
        "--lines", type=int, help="lines in the benchmark log (default 5,000,000 sglang, 3,000,000 vllm)"
    )
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each command (default 3)")
    ap.add_argument("--keep", action="store_true", help="keep bench/out/large_N.log for the next run")
    ap.add_argument("--ours-cmd", help="replace our command (for testing the bench); {file} is substituted")
    ap.add_argument(
        "--tree", action="append", default=[], help="also time summary from this checkout (repeatable)"
    )
    args = ap.parse_args(argv)
    if args.lines is None:
        args.lines = 5_000_000 if args.format == "sglang" else 3_000_000

    path = ensure_log(args.lines, args.format)
    try:
        return bench(path, args)
    finally:
        if not args.keep:
            path.unlink(missing_ok=True)


def bench(path: Path, args: argparse.Namespace) -> int:
    size_mb = path.stat().st_size / 1e6
    template = BASELINE if args.format == "sglang" else BASELINE_VLLM
    baseline = ["bash", "-c", template.format(file=shlex.quote(str(path)))]
    if args.ours_cmd:
        ours = [a.replace("{file}", str(path)) for a in shlex.split(args.ours_cmd)]
    else:
        ours = [sys.executable, "-m", "tui", "summary", "--json", str(path)]
    subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)  # warm the page cache

    trees = {f"tree{i + 1}": Path(t).resolve() for i, t in enumerate(args.tree)}
    summary_cmd = [sys.executable, "-m", "tui", "summary", "--json", str(path)]
    cmds = [("baseline", baseline, ROOT), ("ours", ours, ROOT)] + [
        (k, summary_cmd, d) for k, d in trees.items()
    ]
    runs: dict[str, list[dict]] = {name: [] for name, _, _ in cmds}
    for rep in range(args.reps):
        for name, cmd, cwd in cmds:
            r = measure(cmd, cwd)
            runs[name].append(r)
            print(
                f"  rep {rep + 1}/{args.reps} {name:8s} {r['elapsed']:7.3f} s  "
                f"max RSS {fmt_mb(r['maxrss_kb'])}  tree peak {fmt_mb(r['tree_peak_kb'])}",
                flush=True,
            )
            if r["rc"] != 0:
                print(
                    f"{name} failed (exit {r['rc']}): {' '.join(cmd)}\n{r['stderr'][-2000:]}", file=sys.stderr
                )
                return 2

    try:
        answers = {
            k: [(parse_baseline if k == "baseline" else parse_ours)(r["stdout"]) for r in v]
            for k, v in runs.items()
        }
    except (ValueError, KeyError, TypeError, json.JSONDecodeError) as exc:
        print(f"could not read an answer: {exc!r}", file=sys.stderr)
        return 2
    (bn, bm), (on, om) = answers["baseline"][0], answers["ours"][0]
    stable = all(a == answers[k][0] for k in answers for a in answers[k])
    agree = stable and all(
        n == bn and abs(m - bm) <= 1e-6 + 1e-12 and (k == "baseline" or m == om)
        for k, v in answers.items()
        for n, m in v
    )

    times = {k: sorted(r["elapsed"] for r in v) for k, v in runs.items()}
    best = {k: v[0] for k, v in times.items()}
    ratio = best["ours"] / best["baseline"]
    maxrss = max(r["maxrss_kb"] for r in runs["ours"])
    tree = max(r["tree_peak_kb"] for r in runs["ours"])
    procs = max(r["tree_peak_procs"] for r in runs["ours"])

    def ok(good: bool) -> str:
        return "ok" if good else "MISSED"

    print()
    print(f"file       {path.relative_to(ROOT)}  ({args.lines:,} lines + header, {size_mb:,.0f} MB)")
    print(f"ours       {' '.join(shlex.quote(a) for a in ours)}")
    print(f"{'':24s}{'best':>9s}{'median':>9s}   all runs (s)")
    labels = [("baseline", "baseline (grep | awk)"), ("ours", "ours (summary --json)")]
    for k, d in trees.items():
        print(f"{k:10s} {d}  (summary --json from there)")
        labels.append((k, f"{k} ({best[k] / best['ours']:.2f}x ours)"))
    for k, label in labels:
        print(
            f"{label:24s}{best[k]:9.3f}{statistics.median(times[k]):9.3f}   "
            + " ".join(f"{x:.3f}" for x in times[k])
        )
    print(
        f"{'ratio ours/baseline':24s}{ratio:9.2f}            target <= {TARGET_RATIO:.1f}   {ok(ratio <= TARGET_RATIO)}"
    )
    print(
        f"{'max RSS, largest proc':24s}{fmt_mb(maxrss):>12s}         target <= {TARGET_RSS_MB:.0f} MB  "
        f"{ok(maxrss / 1024 <= TARGET_RSS_MB)}"
    )
    print(
        f"{'peak RSS, tree sum':24s}{fmt_mb(tree):>12s}         target <= {TARGET_RSS_MB:.0f} MB  "
        f"{ok(tree / 1024 <= TARGET_RSS_MB)}   (up to {procs} processes, 20 ms samples)"
    )
    print(f"{'baseline max RSS':24s}{fmt_mb(max(r['maxrss_kb'] for r in runs['baseline'])):>12s}")
    print(
        f"answers    baseline n={bn:,} mean={bm:.6f} | ours n={on:,} mean={om:.9f} | "
        + ("AGREE" if agree else "DISAGREE" + ("" if stable else " (answers changed between runs)"))
    )
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
