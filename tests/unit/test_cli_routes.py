"""Routing of the first words to a command, replay resolving names and globs, and the registry's copies of the settings facts."""

from __future__ import annotations

from tui.cli import _route, build_parser
from tui.cli.tui_commands import _replay_plan

KNOWN = {"watch", "compare", "replay", "demo", "summary", "stream", "export"}


def test_first_words_that_are_sources_go_to_watch(logdir, monkeypatch):
    tmp, log, cfg = logdir
    for word in ("a.log", "./sumary", "logs/*.log", "-", "cmd:ls", "gpu1:/x.log", "x=y"):
        assert _route([word], KNOWN) == ["watch", word]
    assert _route(["run", "--config", str(cfg)], KNOWN) == ["watch", "run", "--config", str(cfg)]
    assert _route([f"--config={cfg}"], KNOWN)[0] == f"--config={cfg}"
    monkeypatch.chdir(tmp)
    assert _route(["logs"], KNOWN) == ["watch", "logs"]  # an existing path


def test_replay_resolves_names_and_globs(logdir):
    tmp, log, cfg = logdir
    plan = _replay_plan(
        build_parser().parse_args(["replay", "--config", str(cfg), "run", f"{log.parent}/*.log"])
    )
    assert [p.path for p in plan.panes] == [str(log), str(log)]
    assert [p.label for p in plan.panes] == ["run", "run.log"]


def test_the_registry_copies_of_settings_facts_agree(monkeypatch, tmp_path):
    from tui.core.config import settings
    from tui.core.sources import spec

    assert spec.NAME_RX.pattern == settings.NAME_RX.pattern
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert spec.default_config_path() == str(settings.default_config_path())
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative")
    assert spec.default_config_path() == str(settings.default_config_path())
