"""Labels from paths (:mod:`tui.core.sources.labels`): alike file names told apart by the
shortest path suffix, in every command that names sources."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests._cli_util import run_cli
from tui.cli import build_parser
from tui.cli.tui_commands import _live_plan, _replay_plan
from tui.core.sources.labels import Named, distinct_labels
from tui.core.sources.spec import parse_source_spec, source_labels

ROOT = Path(__file__).parent.resolve().parent.parent
A, B = ROOT / "sample_logs" / "ab_a.log", ROOT / "sample_logs" / "ab_b.log"


def _runs(tmp_path: Path) -> tuple[Path, Path]:
    blue, green = tmp_path / "runs" / "blue" / "server.log", tmp_path / "runs" / "green" / "server.log"
    for dst, src in ((blue, A), (green, B)):
        dst.parent.mkdir(parents=True)
        shutil.copy(src, dst)
    return blue, green


def test_shortest_suffix_that_tells_them_apart():
    def labels(*paths: str) -> list[str]:
        return distinct_labels([Named(p.rsplit("/", 1)[-1], path=p) for p in paths])

    assert labels("/r/blue/server.log", "/r/green/server.log") == ["blue/server.log", "green/server.log"]
    assert labels("/a/x/s.log", "/b/x/s.log", "/c/s.log") == ["a/x/s.log", "b/x/s.log", "c/s.log"]
    assert labels("/s.log", "/x/s.log") == ["/s.log", "x/s.log"]
    assert labels("/a/s.log", "/b/t.log") == ["s.log", "t.log"]  # no collision: the file names
    # the same file twice: no path tells them apart, so they are numbered
    assert labels("/a/s.log", "/a/s.log", "/b/s.log") == ["a/s.log", "a/s.log (2)", "b/s.log"]


def test_given_labels_win_and_remote_suffixes():
    items = [Named("s.log", path="/a/s.log"), Named("s.log", fixed=True), Named("s.log", path="/b/s.log")]
    assert distinct_labels(items) == ["a/s.log", "s.log", "b/s.log"]
    specs = [
        parse_source_spec("gpu1:/srv/blue/server.log"),
        parse_source_spec("gpu1:/srv/green/server.log"),
        parse_source_spec("gpu2:/srv/blue/server.log"),
        parse_source_spec("mine=gpu2:/srv/green/server.log"),
    ]
    assert source_labels(specs) == [
        "gpu1:…/blue/server.log",
        "gpu1:…/green/server.log",
        "gpu2:server.log",
        "mine",
    ]


def test_panes_replays_and_summary_get_the_same_labels(tmp_path):
    blue, green = _runs(tmp_path)
    want = ["blue/server.log", "green/server.log"]
    parse = build_parser().parse_args
    assert [
        p.label for p in _live_plan(parse(["compare", str(blue), str(green)]), compare=True).panes
    ] == want
    assert [p.label for p in _replay_plan(parse(["replay", str(blue), str(green)])).panes] == want
    out = run_cli("summary", "--json", "blue/server.log", "green/server.log", cwd=tmp_path / "runs")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert [s["label"] for s in d["sources"]] == want
    md = run_cli("summary", "--format", "markdown", str(blue), str(green)).stdout
    assert "A = blue/server.log (segment" in md and "B = green/server.log (segment" in md
    text = run_cli("summary", str(blue), f"new={green}").stdout
    assert "A = server.log (segment" in text and "B = new (segment" in text  # no collision left
