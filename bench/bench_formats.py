"""Every family's fast path against ``grep | awk`` over the same lines, in one run.

    python bench/bench_formats.py [--scale 1.0] [--reps 3] [--keep] [--only sglang,vllm,...]

Logs (bench/out/, generated once; ``--scale`` multiplies the line counts, the lead's full run is
``--scale 1``; here on the shared machine use ``--scale 0.05``):

* SGLang, 5,000,000 lines (``tools/gen_sample_logs.py --large``), anchor ``Decode batch``,
  awk field ``accept len``;
* vLLM V1, 3,000,000 lines (``bench/gen_vllm_log.py``), ``SpecDecoding metrics``, ``Mean acceptance length``;
* llama.cpp, 2,000,000 lines (per request one ``print_timing`` draft line among others),
  ``draft acceptance``, the ``draft acceptance =`` rate;
* the data-only family of the tests (``tests/families/tgi_like``, installed for the run through a
  ``specwatch.formats`` entry point written to a temporary folder), 1,000,000 lines,
  ``text_generation_router: speculative:``, ``accepted=``.

For each log the commands run alternately, ``--reps`` times each, after one untimed read (page
cache): the baseline ``grep ANCHOR FILE | awk`` (the mean of the field and the count), ours
``python -m tui summary --json FILE``, and the pure-Python path (``SPECWATCH_NATIVE=0``). Then a
2,000-line SGLang log against a bare ``python -c pass``. The package's bytecode is compiled
first (``compileall``, as an installed package has it; without it, under
``PYTHONDONTWRITEBYTECODE=1``, every start compiles every module again) and ``python`` is
``sys.executable`` (never a version manager's shim); ``--no-python`` leaves out the pure-Python
runs (for a quick before/after of the native path). Each command runs under ``os.wait4``:
its wall time and the largest single process's max RSS. The answers are checked (the same count
of records as the baseline's lines). Printed: best and median times, ratios to the baseline,
peak RSS, next to the targets (<= 1.0x grep|awk on 2 cores, <= 0.5x on 16; the Python path <=
10x; the small log <= 4x a bare Python start; RSS <= 150 MB). Exit status 1 when an answer
disagrees; missed targets are reported only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
sys.path.insert(0, str(ROOT / "bench"))

from _logs import large_log  # noqa: E402

LOGS = {  # name: (lines at scale 1, anchor, awk field separator)
    "sglang": (5_000_000, "Decode batch", "accept len: "),
    "vllm": (3_000_000, "SpecDecoding metrics", "Mean acceptance length: "),
    # per-position rates that never add up to the mean (gen_vllm_log.py --forked): the same mean
    # as grep | awk, read as fast as "vllm"
    "vllm_forked": (3_000_000, "SpecDecoding metrics", "Mean acceptance length: "),
    "llamacpp": (2_000_000, "draft acceptance", "draft acceptance = "),
    "tgi_like": (1_000_000, "text_generation_router: speculative:", "accepted="),
}


def _llama(path: Path, lines: int) -> None:
    rng = random.Random(3)
    with open(path, "w") as f:
        f.write("0.00.010.000 I system info: n_threads = 8\n")
        for i in range(lines - 1):
            ms = i * 7
            stamp = f"{ms // 60000}.{ms // 1000 % 60:02d}.{ms % 1000:03d}.{rng.randint(0, 999):03d}"
            if i % 4 == 0:
                d = rng.randint(20, 300)
                a = rng.randint(0, d)
                f.write(
                    f"{stamp} I slot print_timing: id  1 | task {i} | draft acceptance = {a / d:.5f} "
                    f"({a:5d} accepted / {d:5d} generated), mean len = {1 + a / max(1, d // 3):.2f}\n"
                )
            else:
                f.write(f"{stamp} I srv  update_slots: id  1 | task {i} | kv cache rm [0, end)\n")


def _tgi(path: Path, lines: int) -> None:
    rng = random.Random(4)
    with open(path, "w") as f:
        for i in range(lines):
            ts = f"2026-03-02T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.{rng.randint(0, 999999):06d}Z"
            if i % 3 == 0:
                d = rng.randint(10, 200)
                f.write(
                    f"{ts}  INFO text_generation_router: speculative: accepted={rng.randint(0, d)} "
                    f"drafted={d} requests={rng.randint(1, 9)}\n"
                )
            else:
                f.write(f"{ts}  INFO text_generation_router::server: request done path=/generate\n")


def make(name: str, lines: int) -> Path:
    if name == "sglang":
        return large_log(lines)
    path = OUT / f"{name}_{lines}.log"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        print(f"generating {path} ...", file=sys.stderr, flush=True)
        if name in ("vllm", "vllm_forked"):
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "bench" / "gen_vllm_log.py"),
                    "--lines",
                    str(lines),
                    "--out",
                    str(path),
                    *(["--forked"] if name == "vllm_forked" else []),
                ],
                check=True,
            )
        elif name == "llamacpp":
            _llama(path, lines)
        else:
            _tgi(path, lines)
    return path


def plugin_env(tmp: Path) -> dict[str, str]:
    dist = tmp / "tgi_like_family-0.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tgi-like-family\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("[specwatch.formats]\ntgi_like = tgi_like\n")
    given = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]  # (wheels beside)
    path = os.pathsep.join([str(ROOT), str(ROOT / "tests" / "families"), str(tmp), *given])
    return {**os.environ, "PYTHONPATH": path}


def timed(cmd: list[str] | str, env: dict[str, str], shell: bool = False) -> tuple[float, float, bytes]:
    """(seconds, max RSS of the largest process in MB, stdout) of one run."""
    t = time.perf_counter()
    p = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, shell=shell, cwd=ROOT
    )
    out = p.stdout.read() if p.stdout else b""
    _, _, ru = os.wait4(p.pid, 0)
    return time.perf_counter() - t, ru.ru_maxrss / 1024, out


def _records(out: bytes) -> int:
    return int(json.loads(out)["sources"][0]["records"])


MEAN_OF = {"vllm", "vllm_forked"}  # logs whose awk field is the accept len specwatch reports as printed


def _mean(out: bytes) -> float:
    return float(json.loads(out)["sources"][0]["accept_len"]["mean"])


def _warm(path: Path) -> None:
    """Read ``path`` into the page cache a piece at a time: never the whole file in this
    process's memory, whose high-water mark a child started by vfork would carry into its own
    max RSS (Linux keeps the larger of the two at exec), so that the children's peaks are theirs."""
    with open(path, "rb") as f:
        while f.read(16 << 20):
            pass


def bench_log(
    name: str, path: Path, reps: int, env: dict[str, str], python: bool = True
) -> tuple[dict, bool]:
    _, anchor, field = LOGS[name]
    base_cmd = (
        f"grep -F '{anchor}' '{path}' | awk -F'{field}' "
        "'{split($2,a,/[ ,(]/); s+=a[1]; n++} END {printf \"%.6f %d\\n\", s/n, n}'"
    )
    ours = [sys.executable, "-m", "tui", "summary", "--json", str(path)]
    py_env = {**env, "SPECWATCH_NATIVE": "0"}
    _warm(path)
    runs: dict[str, list[tuple[float, float]]] = {"grep|awk": [], "ours": [], "python": []}
    answers: dict[str, int] = {}
    means: dict[str, float] = {}
    for _ in range(reps):
        s, rss, out = timed(base_cmd, env, shell=True)
        runs["grep|awk"].append((s, rss))
        answers["grep|awk"] = int(out.split()[1]) if out.split() else -1
        means["grep|awk"] = float(out.split()[0]) if out.split() else float("nan")
        for key, e in (("ours", env), ("python", py_env)) if python else (("ours", env),):
            s, rss, out = timed(ours, e)
            runs[key].append((s, rss))
            answers[key] = _records(out)
            if name in MEAN_OF:  # (the other logs' awk field is not the accept len: the data-only
                means[key] = _mean(out)  # family prints counts alone, so it has none)
    base = min(s for s, _ in runs["grep|awk"])
    row = {
        key: {
            "best": min(s for s, _ in r),
            "median": statistics.median(s for s, _ in r),
            "ratio": min(s for s, _ in r) / base,
            "rss_mb": max(m for _, m in r),
        }
        for key, r in runs.items()
        if r
    }
    agree = answers["ours"] == answers.get("python", answers["ours"]) == answers["grep|awk"]
    if name in MEAN_OF:  # awk prints 6 decimals
        agree = agree and all(abs(m - means["grep|awk"]) <= 1e-6 for m in means.values())
        row["means"] = means
    row["answers"] = answers
    return row, agree


def bench_start(reps: int, env: dict[str, str]) -> dict:
    small = OUT / "small_2000.log"
    if not small.exists():
        lines = large_log(5_000).read_text().splitlines(keepends=True)[:2000]
        small.write_text("".join(lines))
    bare = min(timed([sys.executable, "-c", "pass"], env)[0] for _ in range(reps))
    ours = min(
        timed([sys.executable, "-m", "tui", "summary", "--json", str(small)], env)[0] for _ in range(reps)
    )
    return {"bare_python": bare, "summary_2000_lines": ours, "ratio": ours / bare}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the line counts (default 1)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default=",".join(LOGS), help="comma-separated logs (default all)")
    ap.add_argument("--keep", action="store_true", help="keep the generated logs")
    ap.add_argument("--no-python", action="store_true", help="leave out the pure-Python runs")
    args = ap.parse_args(argv)
    ok = True
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "tui")], check=False)
    with tempfile.TemporaryDirectory() as tmp:
        env = plugin_env(Path(tmp))
        made = []
        print(
            f"cores: {os.cpu_count()}   targets: <= 1.0x grep|awk (2 cores), <= 0.5x (16), python <= 10x, RSS <= 150 MB"
        )
        for name in args.only.split(","):
            lines = max(1000, int(LOGS[name][0] * args.scale))
            path = make(name, lines)
            made.append(path)
            row, agree = bench_log(name, path, args.reps, env, not args.no_python)
            ok &= agree
            g, o, p = row["grep|awk"], row["ours"], row.get("python")
            py = f"python {p['best']:.3f}s ({p['ratio']:.2f}x)  " if p else ""
            print(
                f"{name:11s} {lines:>9,d} lines  grep|awk {g['best']:.3f}s  ours {o['best']:.3f}s ({o['ratio']:.2f}x)  "
                f"{py}peak RSS {max(o['rss_mb'], p['rss_mb'] if p else 0):.0f} MB  "
                f"answers {'agree' if agree else 'DISAGREE ' + str(row['answers']) + ' ' + str(row.get('means'))}"
            )
        st = bench_start(args.reps, env)
        print(
            f"start     2,000 lines: summary {st['summary_2000_lines']:.3f}s vs bare python {st['bare_python']:.3f}s "
            f"({st['ratio']:.1f}x, target <= 4x)"
        )
        if not args.keep:
            for p in made:
                if p.parent == OUT:
                    p.unlink(missing_ok=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
