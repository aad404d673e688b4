"""The family defined only by data under tests/families/tgi_like (installed through a
``specwatch.formats`` entry point, as ``pip install`` of a plug-in would) is read by every command:
``watch`` and ``replay`` (the real app through ``App.run_test`` and Pilot, on the plans the
commands build from their arguments), ``stream`` (text and JSON lines) and ``export`` (the daemon's
/metrics), with the numbers ``summary`` gives (tests/unit/test_data_family.py tests ``summary``).

The family is found when the process starts, so each command runs in a process of its own with
the family installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _cli_util import ROOT, run_cli
from _export_util import one, scraped_when_read

N = 300
ACCEPTED = sum((10 + i % 90) // 2 for i in range(N))
DRAFTED = sum(10 + i % 90 for i in range(N))
LINE = (
    "2026-03-02T10:{m:02d}:{s:02d}.{us:06d}Z  INFO text_generation_router: speculative: "
    "accepted={a} drafted={d} requests={r}"
)


def _env(tmp_path: Path) -> dict[str, str]:
    """The tests' family installed: its folder on the path, a distribution naming it."""
    dist = tmp_path / "site" / "tgi_like_family-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tgi-like-family\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("[specwatch.formats]\ntgi_like = tgi_like\n")
    path = [str(ROOT), str(ROOT / "tests" / "families"), str(tmp_path / "site")]
    return {"PYTHONPATH": os.pathsep.join(path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def _log(tmp_path: Path) -> Path:
    lines = []
    for i in range(N):
        d = 10 + i % 90
        lines.append(LINE.format(m=i // 60, s=i % 60, us=i * 7 % 1000000, a=d // 2, d=d, r=1 + i % 4))
        lines.append(f"2026-03-02T10:{i // 60:02d}:{i % 60:02d}.000001Z  INFO text_generation_router: done")
    p = tmp_path / "tgi.log"
    p.write_text("\n".join(lines) + "\n")
    return p


# the app in a process where the family is installed, on the plan a command builds from its
# arguments; prints what the pane holds and shows
APP = textwrap.dedent(
    """
    import asyncio, json, sys
    sys.path[:0] = [{tests!r}]
    from _wait import wait_until_async
    from tui.app import SpecwatchApp
    from tui.cli import build_parser
    from tui.cli import tui_commands as tc
    from tui.widgets.numbers import NumbersPanel

    argv = {argv!r}
    args = build_parser().parse_args(argv)
    plan = tc._replay_plan(args) if argv[0] == "replay" else tc._live_plan(args, compare=False)

    async def main():
        app = SpecwatchApp(plan, save_dir={save!r})
        async with app.run_test(size=(160, 45)) as pilot:
            screen = app.screen
            def ended():
                return all(s.status in ("ended", "error") for s in screen.states)
            await wait_until_async(ended, what="the source's end", pause=pilot.pause, step=0.05,
                                   show=lambda: [s.status for s in screen.states])
            panel = screen.query_one(NumbersPanel)
            def shown():
                screen.tick()
                return panel.values is not None and "accept" in panel.plain
            await wait_until_async(shown, what="the numbers", pause=pilot.pause, step=0.05,
                                   show=lambda: panel.plain)
            st = screen.states[0]
            m = st.stats.total
            print(json.dumps({{
                "status": st.status, "records": st.stats.records,
                "accepted": m.accepted, "drafted": m.drafted,
                "pooled_rate": m.pooled_rate.estimate().value, "panel": panel.plain,
                "scanned": st._whole_buffer.fast_chunks if st._whole_buffer is not None else 0,
            }}))

    asyncio.run(main())
    """
)


def _app(tmp_path: Path, *argv: str) -> dict:
    code = APP.format(tests=str(ROOT / "tests"), argv=list(argv), save=str(tmp_path))
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **_env(tmp_path)},
        cwd=ROOT,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("command", [("watch", "--no-follow"), ("replay", "--max")], ids=lambda c: c[0])
def test_watch_and_replay_show_it(tmp_path, command):
    got = _app(tmp_path, *command, str(_log(tmp_path)))
    assert got["status"] == "ended", got
    assert (got["records"], got["accepted"], got["drafted"]) == (N, ACCEPTED, DRAFTED), got
    assert got["pooled_rate"] == pytest.approx(ACCEPTED / DRAFTED, rel=1e-12)
    assert f"{ACCEPTED / DRAFTED:.3f}" in got["panel"], got["panel"]
    if command[0] == "replay":  # at full speed the buffers go through the scanner: the fast path
        assert got["scanned"] > 0, got


def test_stream_prints_it(tmp_path):
    env = _env(tmp_path)
    log = _log(tmp_path)
    r = run_cli("stream", "--no-follow", str(log), env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    first = next(ln for ln in r.stdout.splitlines() if "accepted" in ln)
    assert "accepted=5" in first and "drafted=10" in first, first
    r = run_cli("stream", "--jsonl", "--no-follow", str(log), env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    recs = [o for o in map(json.loads, r.stdout.splitlines()) if o.get("kind") == "record"]
    assert [o["family"] for o in recs] == ["tgi_like"] * N
    assert sum(o["accepted"] for o in recs) == ACCEPTED and sum(o["drafted"] for o in recs) == DRAFTED


def test_export_serves_it(tmp_path):
    log = _log(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui", "export", "--prometheus", "127.0.0.1:0", str(log)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **_env(tmp_path)},
    )
    try:
        got = scraped_when_read(proc, "tgi.log", N)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    lab = {"source": "tgi.log", "rank": "all"}
    assert one(got, "specwatch_accepted_tokens_total", **lab) == ACCEPTED
    assert one(got, "specwatch_drafted_tokens_total", **lab) == DRAFTED
