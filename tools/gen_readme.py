"""Regenerate what README.md shows of the code's output, from the code: the sample output of
``specwatch summary`` and ``docs/screenshot.svg`` (the demo, replayed to its end).

    python tools/gen_readme.py           # rewrite README.md's generated blocks and the screenshot
    python tools/gen_readme.py --check   # exit 1 when they differ from what the code prints

A generated block in README.md sits between ``<!-- generated: NAME -->`` and ``<!-- end -->``;
``tests/functional/test_readme_fresh.py`` fails when one is stale (the screenshot compared after
:func:`normalise`, which takes out what differs between two runs of the same picture: the id
Rich derives from the content hash, and nothing else).
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SCREENSHOT = ROOT / "docs" / "screenshot.svg"
SAMPLE = "sample_logs/sglang_eagle3_restart.log"
COLUMNS = 100  # the width the sample output is printed at (a terminal of 100 columns)
SIZE = (160, 45)  # the screenshot's terminal
BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end -->)", re.S)


def _specwatch(*args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(COLUMNS=str(COLUMNS), PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-m", "tui", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    if out.returncode != 0:
        raise SystemExit(f"specwatch {' '.join(args)}: exit {out.returncode}: {out.stderr}")
    return out.stdout


def summary_block() -> str:
    """``specwatch summary`` of the bundled sample, as a terminal of COLUMNS columns shows it."""
    cmd = ("summary", SAMPLE)
    return "```\n$ specwatch " + " ".join(cmd) + "\n" + _specwatch(*cmd).rstrip("\n") + "\n```\n"


def demo_block() -> str:
    """The demo's two runs in one sentence, with the means ``summary`` gives them."""
    import json

    d = json.loads(_specwatch("summary", "--json", SAMPLE))
    segs = d["sources"][0]["segments"]
    before, after = (f"{s['accept_len']['mean']:.2f}" for s in (segs[0], segs[-1]))
    return (
        f"The first command installs specwatch and starts the demo: the bundled sample of an EAGLE-3\n"
        f"server restarted from a broken config (accept len {before}) to a fixed one ({after}), both runs\n"
        "replayed side by side with a live B − A verdict (`q` quits).\n"
    )


GENERATORS = {"summary": summary_block, "demo": demo_block}


def readme(text: str) -> str:
    """``text`` (README.md) with every generated block made again."""

    def again(m: re.Match) -> str:
        name = m.group("name")
        if name not in GENERATORS:
            raise SystemExit(f"README.md: no generator for the block {name!r}")
        return m.group(1) + GENERATORS[name]() + m.group(4)

    return BLOCK.sub(again, text)


async def _screenshot() -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    from _tui_util import finished  # the snapshot tests' wait for a stable picture

    from tui.app import SpecwatchApp
    from tui.panes.launch import DEMO_MAX_GAP, demo_plan, replay_pane

    plan = demo_plan()  # the demo, its replays at full speed: to their end at once
    plan.panes = [
        replay_pane(p.path or "", p.label, speed=None, max_gap=DEMO_MAX_GAP, where=p.where)
        for p in plan.panes
    ]
    app = SpecwatchApp(plan)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await finished(pilot)
            return app.export_screenshot(title="specwatch")
    finally:
        for fn in plan.cleanup:
            fn()


def screenshot() -> str:
    """The demo replayed to its end at SIZE, as an SVG (the themes remembered in a throwaway dir)."""
    with tempfile.TemporaryDirectory() as tmp:
        old = os.environ.get("XDG_CONFIG_HOME")
        os.environ["XDG_CONFIG_HOME"] = tmp
        try:
            return asyncio.run(_screenshot())
        finally:
            if old is None:
                os.environ.pop("XDG_CONFIG_HOME", None)
            else:
                os.environ["XDG_CONFIG_HOME"] = old


def normalise(svg: str) -> str:
    """An SVG without what two runs of the same picture may differ in: Rich's content-hash id."""
    return re.sub(r"terminal-\d+", "terminal-ID", svg)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    text = README.read_text(encoding="utf-8")
    new = readme(text)
    if new != text:
        stale.append("README.md")
        if not check:
            README.write_text(new, encoding="utf-8")
    svg = screenshot()
    if normalise(svg) != normalise(SCREENSHOT.read_text(encoding="utf-8")):
        stale.append(str(SCREENSHOT.relative_to(ROOT)))
        if not check:
            SCREENSHOT.write_text(svg, encoding="utf-8")
    if stale:
        print(("stale: " if check else "rewritten: ") + ", ".join(stale))
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main(sys.argv[1:]))
