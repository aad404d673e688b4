"""Benchmark the TUI under load, Pilot-driven (headless, 160x45).

    python bench/bench_tui.py [--lines 1000000 | --log PATH] [--rounds 3] [--long 3000000 | --no-long]
                              [--keep] [--tree PATH]

1. ``replay --max`` of an N-line SGLang log (``bench/out/large_N.log``, made by
   ``tools/gen_sample_logs.py --large N``), or of any log given with ``--log`` (e.g. the 3M-line
   vLLM server log of ``bench/gen_vllm_log.py --lines 3000000``; it is only read). Reported: the
   lines/s from the app's start to the end of the file (parser, statistics and UI together; the
   median of ``--rounds`` replays, each in a new app). While the file streams in as fast as the
   app takes it, a key (``m``) is pressed every 0.25 s (a Key event posted to the app, as the
   terminal driver does): the latency from the press to the action running and to the next frame
   composed (target: p99 < 100 ms, pooled over the rounds). The UI tick (4 Hz) intervals and the
   time each render takes are recorded at the same time: the refresh rate must stay steady.
   ``--tree PATH`` runs another checkout's app (its ``tui`` package is imported instead of this
   one's): the way to compare lines/s with an older commit in one run on this noisy machine.
2. A long run (left out with ``--no-long``): a synthetic live source delivers ``--long`` decode
   lines (a restart every 200k lines) as fast as they are taken, while the charts and log tail
   redraw on their cadence (charts once a second, log tail twice); RSS is sampled every 250k lines. Memory must level off (bounded deques; a
   chart redraw keeps nothing).

Prints the figures; exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

from _logs import large_log  # bench/ is the script's directory, first on sys.path

ROOT = Path(__file__).resolve().parent.parent


def _tree() -> Path:
    """The checkout whose app is measured: ``--tree PATH`` (read before argparse: the imports
    below depend on it), else this one."""
    argv = sys.argv[1:]
    for i, a in enumerate(argv):
        if a == "--tree" and i + 1 < len(argv):
            return Path(argv[i + 1]).resolve()
        if a.startswith("--tree="):
            return Path(a.split("=", 1)[1]).resolve()
    return ROOT


TREE = _tree()
sys.path.insert(0, str(TREE))

from textual import events  # noqa: E402

from tui.app import SpecwatchApp  # noqa: E402
from tui.core.sources.base import EventKind, LineBatch, SourceEvent  # noqa: E402
from tui.panes.launch import LaunchPlan, PaneSpec, replay_pane  # noqa: E402

SIZE = (160, 45)


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def tick_stats(screen, since: float) -> tuple[list[float], list[float]]:
    log = [(t, d) for t, d in screen.tick_log if t >= since]
    starts = [t for t, _ in log]
    return [b - a for a, b in zip(starts, starts[1:])], [d for _, d in log]


def count_lines(path: Path) -> int:
    n, last = 0, b"\n"
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (last != b"\n")


async def bench_replay(path: Path) -> dict:
    lines_total = count_lines(path)
    t_app = time.perf_counter()  # lines/s from here: the app's start is part of the replay
    app = SpecwatchApp(
        LaunchPlan([replay_pane(str(path), None, speed=None)]),
        save_dir=ROOT / "bench" / "out",
        remember_theme=False,
    )
    latencies: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        handled: list[float] = []
        original = screen.action_add_mark

        def timed_mark() -> None:
            handled.append(time.perf_counter())
            original()

        screen.action_add_mark = timed_mark  # type: ignore[method-assign]
        frames: list[float] = []  # when the screen was composed and handed to the terminal
        compose = screen._compositor_refresh

        def timed_frame() -> None:
            compose()
            frames.append(time.perf_counter())

        screen._compositor_refresh = timed_frame  # type: ignore[method-assign]
        frame_lat: list[float] = []
        state = screen.states[0]
        t_start = time.perf_counter()
        while state.status != "ended":
            await asyncio.sleep(0.25)
            n = len(handled)
            sent = time.perf_counter()
            app.post_message(events.Key("m", "m"))  # what the terminal driver does on a key press
            while len(handled) == n:
                await asyncio.sleep(0.001)
            latencies.append(handled[-1] - sent)
            done = handled[-1]
            while not frames or frames[-1] < done:  # the first frame after the action: the key's effect
                await asyncio.sleep(0.001)
            frame_lat.append(next(f for f in frames if f >= done) - sent)
            app.clear_notifications()
        time_ended = time.perf_counter()
        elapsed = time_ended - t_start
        intervals, renders = tick_stats(screen, t_start)
        records = state.stats.records
        await pilot.press("q")
    return {
        "lines": lines_total,
        "records": records,
        "seconds": elapsed,
        "lines_per_s": lines_total / (time_ended - t_app),
        "state_lines": state.lines,
        "latencies": latencies,
        "frame_lat": frame_lat,
        "intervals": intervals,
        "renders": renders,
    }


def pooled(rounds: list[dict]) -> dict:
    """Several replays of the same log: key and frame latencies pooled (a p99 needs more than the
    dozen presses one fast replay allows), lines/s the median round."""
    lat = [x for r in rounds for x in r["latencies"]]
    frame = [x for r in rounds for x in r["frame_lat"]]
    intervals = [x for r in rounds for x in r["intervals"]]
    renders = [x for r in rounds for x in r["renders"]]
    seconds = sum(r["seconds"] for r in rounds)
    speeds = sorted(r["lines_per_s"] for r in rounds)
    last = rounds[-1]
    return {
        "lines": last["lines"],
        "records": last["records"],
        "state_lines": last["state_lines"],
        "rounds": len(rounds),
        "seconds": seconds,
        "lines_per_s": speeds[len(speeds) // 2],
        "lines_per_s_all": speeds,
        "presses": len(lat),
        "lat_p50": pct(lat, 50),
        "lat_p99": pct(lat, 99),
        "lat_max": max(lat),
        "frame_p50": pct(frame, 50),
        "frame_p99": pct(frame, 99),
        "frame_max": max(frame),
        "tick_p50": pct(intervals, 50),
        "tick_p99": pct(intervals, 99),
        "tick_max": max(intervals),
        "ticks_per_s": len(intervals) / seconds,
        "render_p50": pct(renders, 50),
        "render_p99": pct(renders, 99),
    }


class SynthSource:
    """An endless live server: SGLang decode lines, a restart (server_args) every 200k lines."""

    name = "synthetic"

    def __init__(self, total: int, batch: int = 2000) -> None:
        self.total, self.batch, self.sent = total, batch, 0
        self.closed = False

    def __aiter__(self):
        return self._gen()

    async def _gen(self):
        yield SourceEvent(self.name, EventKind.OPENED, "synthetic")
        steps = 3
        while self.sent < self.total:
            lines = []
            for i in range(self.batch):
                k = self.sent + i
                if k % 200_000 == 0:
                    steps = 3 + (k // 200_000) % 3
                    lines.append(
                        f"[2026-11-20 10:00:00] server_args=ServerArgs(model_path='m', "
                        f"speculative_algorithm='EAGLE3', speculative_num_steps={steps}, "
                        f"speculative_eagle_topk=1, speculative_num_draft_tokens={steps + 1})"
                    )
                    continue
                s = (k // 10) % 86400
                al = 1.5 + steps * 0.25 + ((k * 7919) % 100) / 200
                lines.append(
                    f"[2026-11-20 {s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}] Decode batch, "
                    f"#running-req: {1 + k % 30}, #token: {k % 9000}, token usage: 0.01, "
                    f"accept len: {al:.2f}, accept rate: {(al - 1) / steps:.2f}, cuda graph: True, "
                    f"gen throughput (token/s): {100 + k % 2000:.2f}, #queue-req: 0"
                )
            yield LineBatch(self.name, lines, list(range(self.sent, self.sent + len(lines))), self.sent + 1)
            self.sent += len(lines)
            await asyncio.sleep(0)
        yield SourceEvent(self.name, EventKind.EOF, "end")

    async def aclose(self) -> None:
        self.closed = True


async def bench_long(total: int) -> dict:
    src = SynthSource(total)
    app = SpecwatchApp(LaunchPlan([PaneSpec("synthetic", "generated", lambda: src)]), remember_theme=False)
    samples: list[tuple[int, float]] = []
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        state = screen.states[0]
        t0 = time.perf_counter()
        mark = 0
        while state.status != "ended":
            await asyncio.sleep(0.05)
            if state.lines >= mark:
                samples.append((state.lines, rss_mb()))
                mark += 250_000
            app.clear_notifications()
        elapsed = time.perf_counter() - t0
        samples.append((state.lines, rss_mb()))
        intervals, renders = tick_stats(screen, t0)
        sizes = {
            "history": len(state.history),
            "raw": len(state.raw),
            "segments": len(state.stats.segments),
            "boundaries": len(state.boundaries),
        }
        from tui.widgets.history_chart import HistoryChart

        builds = screen.query_one(HistoryChart).builds
        await pilot.press("q")
    return {
        "lines": state.lines,
        "seconds": elapsed,
        "samples": samples,
        "sizes": sizes,
        "chart_builds": builds,
        "tick_p50": pct(intervals, 50),
        "tick_p99": pct(intervals, 99),
        "render_p99": pct(renders, 99),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--long", type=int, default=3_000_000)
    ap.add_argument("--rounds", type=int, default=3, help="replays of the log (latencies pooled)")
    ap.add_argument("--no-long", action="store_true", help="leave out the long run")
    ap.add_argument("--keep", action="store_true", help="keep the generated log")
    ap.add_argument("--log", help="replay this log (only read) instead of a generated SGLang one")
    ap.add_argument("--tree", default=str(ROOT), help="the checkout whose app is measured")
    args = ap.parse_args()
    ok = True
    path = Path(args.log) if args.log else large_log(args.lines)
    try:
        r = pooled([asyncio.run(bench_replay(path)) for _ in range(args.rounds)])
    finally:
        if not args.keep and not args.log:
            path.unlink(missing_ok=True)
    print(f"\ntree: {TREE}")
    print(
        f"replay --max of {path.name}, {r['lines']:,} lines ({r['records']:,} records, "
        f"{r['state_lines']:,} lines counted by the pane), {r['rounds']} rounds: "
        f"{r['lines_per_s']:,.0f} lines/s (median round; all: "
        f"{', '.join(f'{x:,.0f}' for x in r['lines_per_s_all'])}) from the app's start to the end "
        f"of the file (parser + statistics + UI)"
    )
    print(
        f"  key press -> action handled ({r['presses']} presses): p50 {r['lat_p50'] * 1e3:.1f} ms, "
        f"p99 {r['lat_p99'] * 1e3:.1f} ms, max {r['lat_max'] * 1e3:.1f} ms   (target p99 < 100 ms)"
    )
    print(
        f"  key press -> next frame composed: p50 {r['frame_p50'] * 1e3:.1f} ms, "
        f"p99 {r['frame_p99'] * 1e3:.1f} ms, max {r['frame_max'] * 1e3:.1f} ms   (target p99 < 100 ms)"
    )
    print(
        f"  UI tick interval: p50 {r['tick_p50'] * 1e3:.0f} ms, p99 {r['tick_p99'] * 1e3:.0f} ms, "
        f"max {r['tick_max'] * 1e3:.0f} ms ({r['ticks_per_s']:.2f} renders/s, nominal 4); "
        f"render p50 {r['render_p50'] * 1e3:.1f} ms, p99 {r['render_p99'] * 1e3:.1f} ms"
    )
    ok &= r["lat_p99"] < 0.100 and r["frame_p99"] < 0.100
    if args.no_long:
        return 0 if ok else 1
    lg = asyncio.run(bench_long(args.long))
    first = lg["samples"][1][1] if len(lg["samples"]) > 1 else lg["samples"][0][1]
    last = lg["samples"][-1][1]
    print(
        f"\nlong run: {lg['lines']:,} synthetic decode lines in {lg['seconds']:.1f} s "
        f"({lg['lines'] / lg['seconds']:,.0f} lines/s), {lg['chart_builds']} chart redraws"
    )
    print("  RSS by lines read: " + ", ".join(f"{n / 1e6:.2f}M: {m:.0f} MB" for n, m in lg["samples"]))
    print(f"  growth after the first 250k lines: {last - first:+.1f} MB; kept: {lg['sizes']}")
    print(
        f"  UI tick interval p50 {lg['tick_p50'] * 1e3:.0f} ms, p99 {lg['tick_p99'] * 1e3:.0f} ms; "
        f"render p99 {lg['render_p99'] * 1e3:.1f} ms"
    )
    ok &= (last - first) < 40
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
