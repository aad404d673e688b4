"""Calibration of verdicts and intervals (issue 21; run by hand, the table in docs/statistics.md).

    nice python bench/bench_calibration.py --reps 400 --out bench/out/calib_new.json
    nice python bench/bench_calibration.py --reps 400 --code /work/main --out bench/out/calib_old.json
    python bench/bench_calibration.py --table bench/out/calib_new.json [bench/out/calib_old.json]

Every replicate goes through the path of ``summary --json`` (tests/_calib_util.py: a log text,
summarize_stream, verdicts.comparison). Cells: AR(1) accept lengths φ ∈ {0, 0.5, 0.9, 0.97} × n
∈ {30, 100, 300, 1000, 3000} (with the power to find +0.3), regime switches and slow cycles at
the same n, pooled counts with lognormal drafts (10× and 100× spread, φ ∈ {0, 0.5, 0.9}, n ∈ {30,
100, 300}), one interval with 1,000× the drafts (n = 100), load-adjusted A/B at equal and at 4×
load (φ ∈ {0, 0.5, 0.9}, n = 1,000); the regime family of issue 30 (regime_cells: the held-out
generators and ``--family`` generators drawn at random, seeded, for means and pooled ratios, n ∈
{30, 100, 300, 1000}; coverage of the long-run mean and of the mean of the process seen). ``--code DIR`` imports ``tui`` from another checkout (today's
numbers from main). ``--only PREFIX`` runs the cells whose name starts with it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


REGIME_NS = (30, 100, 300, 1000)


def cells(family: int) -> list[tuple[str, int, dict]]:
    out: list[tuple[str, int, dict]] = []
    for phi in (0.0, 0.5, 0.9, 0.97):
        for n in (30, 100, 300, 1000, 3000):
            out.append((f"ar1 phi={phi}", n, {"kind": "ar1", "phi": phi}))
    for kind in ("regime", "cycle"):
        for n in (30, 100, 300, 1000, 3000):
            out.append((kind, n, {"kind": kind}))
    for spread in (10.0, 100.0):
        for phi in (0.0, 0.5, 0.9):
            for n in (30, 100, 300):
                out.append(
                    (f"pooled {spread:g}x phi={phi}", n, {"kind": "pooled", "spread": spread, "phi": phi})
                )
    out.append(("pooled one 1000x interval", 100, {"kind": "big"}))
    for scale in (1.0, 4.0):
        for phi in (0.0, 0.5, 0.9):
            out.append((f"load {scale:g}x phi={phi}", 1000, {"kind": "load", "scale": scale, "phi": phi}))
    return out + regime_cells(family)


def regime_cells(family: int) -> list[tuple[str, int, dict]]:
    """The regime family of issue 30: the held-out generators, then ``family`` generators drawn
    at random (seed 30) for means (levels around 2.2…2.8) and as many for pooled ratios (accepted
    tokens per draft around 1.2…1.8), each at every n of REGIME_NS."""
    import _calib_util as cu

    specs = [("regime held-out", cu.HELD_OUT, False), ("pooled regime held-out", cu.HELD_OUT_POOLED, True)]
    rng = cu.random.Random(30)
    for i in range(family):
        specs.append((f"regime {i + 1}", cu.draw_regime(rng, (2.2, 2.8), (0.3, 0.8)), False))
        specs.append((f"pooled regime {i + 1}", cu.draw_regime(rng, (1.2, 1.8), (0.3, 0.8)), True))
    specs.sort(key=lambda x: x[2])
    return [
        (name, n, {"kind": "family", "spec": spec, "pooled": pooled, "label": spec.label()})
        for name, spec, pooled in specs
        for n in REGIME_NS
    ]


def run(reps: int, only: str, family: int = 8) -> list[dict]:
    import _calib_util as cu

    rows = []
    for i, (name, n, spec) in enumerate(cells(family)):
        if only and not any(name.startswith(p) for p in only.split(",")):
            continue
        t0 = time.perf_counter()
        kind = spec["kind"]
        seed = 1000 * i + n
        if kind == "ar1":
            phi = spec["phi"]
            t = cu.lines_cell(lambda r, n, s, phi=phi: cu.ar1(r, n, phi, cu.MEAN + s), n, reps, seed, 0.3)
        elif kind == "regime":
            t = cu.lines_cell(cu.regime, n, reps, seed, 0.3)
        elif kind == "cycle":
            t = cu.lines_cell(cu.cycle, n, reps, seed, 0.3)
        elif kind == "pooled":
            t = cu.pooled_cell(n, spec["spread"], spec["phi"], reps, seed)
        elif kind == "big":
            t = cu.pooled_cell(n, 1.0, 0.0, reps, seed, big=True)
        elif kind == "family":
            pooled = spec["pooled"]
            t = cu.regime_cell(spec["spec"], n, reps, seed, pooled, None if pooled else 0.3)
        else:
            t = cu.load_cell(n, spec["phi"], spec["scale"], reps, seed)
        row = {"cell": name, "n": n, **t.__dict__, "secs": round(time.perf_counter() - t0, 1)}
        if kind == "family":
            row["generator"] = spec["label"]
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    return rows


def _pct(k: int, n: int) -> str:
    return f"{100 * k / n:.1f}" if n else "–"


def table(new: list[dict], old: list[dict] | None) -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(ROOT))
    from _calib_util import wilson

    before = {(r["cell"], r["n"]): r for r in old or []}
    head = "| cell | n | false % (95% upper) | coverage % (95% lower) | insufficient % | power +0.3 % |"
    if old:
        head += " today: false / coverage / insufficient / power % |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in new:
        f_hi = wilson(r["false"], r["reps"])[1]
        c_lo = wilson(r["covered"], r["intervals"])[0]
        power = _pct(r["found"], r["shifted"]) if r["shifted"] else "–"
        line = (
            f"| {r['cell']} | {r['n']} | {_pct(r['false'], r['reps'])} ({100 * f_hi:.1f}) | "
            f"{_pct(r['covered'], r['intervals'])} ({100 * c_lo:.1f}) | {_pct(r['insufficient'], r['reps'])} | {power} |"
        )
        if old:
            line += _today(before.get((r["cell"], r["n"])))
        lines.append(line)
    return "\n".join(lines)


def _today(o: dict | None) -> str:
    """The table's last column: the same cell's figures from the baseline run."""
    if not o:
        return " – |"
    power = _pct(o["found"], o["shifted"]) if o["shifted"] else "–"
    return (
        f" {_pct(o['false'], o['reps'])} / {_pct(o['covered'], o['intervals'])} / "
        f"{_pct(o['insufficient'], o['reps'])} / {power} |"
    )


def regime_table(new: list[dict], old: list[dict] | None) -> str:
    """The regime family's table: coverage of the long-run mean and of the mean of the process
    seen, the share of logs that never left their first level."""
    from _calib_util import wilson

    before = {(r["cell"], r["n"]): r for r in old or []}
    head = (
        "| cell | generator | n | false % (95% upper) | coverage % (95% lower) | coverage of the "
        "process seen % | one level % | insufficient % | power +0.3 % |"
    )
    if old:
        head += " today: false / coverage / insufficient / power % |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in new:
        if "generator" not in r:
            continue
        f_hi = wilson(r["false"], r["reps"])[1]
        c_lo = wilson(r["covered"], r["intervals"])[0]
        power = _pct(r["found"], r["shifted"]) if r["shifted"] else "–"
        line = (
            f"| {r['cell']} | {r['generator']} | {r['n']} | {_pct(r['false'], r['reps'])} ({100 * f_hi:.1f}) | "
            f"{_pct(r['covered'], r['intervals'])} ({100 * c_lo:.1f}) | "
            f"{_pct(r['seen_covered'], r['intervals'])} | {_pct(r['one_level'], r['reps'])} | "
            f"{_pct(r['insufficient'], r['reps'])} | {power} |"
        )
        if old:
            line += _today(before.get((r["cell"], r["n"])))
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--code", type=Path, default=ROOT, help="checkout whose tui is measured")
    ap.add_argument("--only", default="")
    ap.add_argument("--family", type=int, default=8, help="generators drawn from the regime family")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--table", nargs="+", type=Path, help="print the table of one or two result files")
    args = ap.parse_args(argv)
    if args.table:
        new = json.loads(args.table[0].read_text())
        old = json.loads(args.table[1].read_text()) if len(args.table) > 1 else None
        print(table([r for r in new if "generator" not in r], old))
        print()
        print(regime_table(new, old))
        return 0
    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(args.code.resolve()))
    rows = run(args.reps, args.only, args.family)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
