"""The TUI commands' arguments, errors and layering (no Textual needed for any of this)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.cli import build_parser, main
from tui.cli.tui_commands import _live_plan, _replay_plan
from tui.panes.launch import default_label, demo_plan, unique_labels

ROOT = Path(__file__).parent.resolve().parent.parent
A, B = str(ROOT / "sample_logs" / "ab_a.log"), str(ROOT / "sample_logs" / "ab_b.log")


def parse(*argv: str):
    return build_parser().parse_args(list(argv))


def test_routes_and_subcommands():
    from tui.cli import _route

    known = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert {"watch", "compare", "replay", "demo"} <= known
    assert _route([], known) == ["demo"]
    assert _route(["a.log"], known) == ["watch", "a.log"]


def test_replay_plan_labels_speed_and_compare():
    plan = _replay_plan(parse("replay", "--speed", "4", f"base={A}", B))
    assert [p.label for p in plan.panes] == ["base", "ab_b.log"]
    assert plan.compare and all(p.replay for p in plan.panes)
    src = plan.panes[0].open()
    assert src.speed == 4.0
    assert _replay_plan(parse("replay", "--max", A)).panes[0].open().speed is None
    assert not _replay_plan(parse("replay", "--no-compare", A, B)).compare
    assert not _replay_plan(parse("replay", A, B, A)).compare


def test_live_plan_labels():
    plan = _live_plan(parse("watch", A, f"gpu1={B}"), compare=False)
    assert [p.label for p in plan.panes] == ["ab_a.log", "gpu1"]
    assert plan.panes[0].where == "sample_logs/ab_a.log" or plan.panes[0].where.endswith("ab_a.log")
    assert _live_plan(parse("compare", A, B), compare=True).compare
    assert unique_labels(["a", "a", "b"]) == ["a", "a (2)", "b"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["replay", "/nonexistent.log"], "no such file"),
        (["replay", "--speed", "0", A], "--speed"),
        (["replay", "--speed", "2", "--max", A], "not allowed with argument"),
        (["compare", A], "needs two sources"),
        (["watch", "--from", "middle", A], "specwatch watch"),
        (["watch", "/tmp"], "is a directory"),
    ],
)
def test_errors_are_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_demo_plan_finds_the_samples_and_cleans_up():
    plan = demo_plan()
    assert [p.label for p in plan.panes] == ["broken", "fixed"] and plan.compare and plan.demo
    paths = [Path(p.path) for p in plan.panes]
    assert all(p.exists() for p in paths)
    for fn in plan.cleanup:
        fn()
    assert not any(p.exists() for p in paths)


def test_demo_without_samples_is_a_clear_error(monkeypatch, tmp_path, capsys):
    import tui.panes.launch as launch

    monkeypatch.setattr(launch, "sample_dirs", lambda: [tmp_path])
    assert main(["demo"]) == 2
    assert "needs the bundled sample logs" in capsys.readouterr().err


def test_default_label_kinds():
    from tui.core.sources.spec import parse_source_spec

    assert default_label(parse_source_spec(A)) == "ab_a.log"
    assert default_label(parse_source_spec("x=" + A)) == "x"
    assert default_label(parse_source_spec("cmd:kubectl logs -f pod")) == "cmd:kubectl"
