"""The source kinds answer for their specs: label, where, location, host, files; the config is
read only when a text could name something in it."""

from __future__ import annotations

import os
import time

import pytest

from tui.core.sources import spec as spec_module
from tui.core.sources.kinds import COMMAND, FILE, GLOB, METRICS, PIPE, SSH, STDIN, kind_of, newest_match
from tui.core.sources.spec import ConfigRef, SourceSpecError, expand_source_args, parse_source_spec


def test_each_text_goes_to_its_kind(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.log").write_text("x\n")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    cases = {
        "a.log": FILE,
        "later.log": FILE,
        "logs/*.log": GLOB,
        "pipe": PIPE,
        "-": STDIN,
        "cmd:echo hi": COMMAND,
        "gpu1:/x.log": SSH,
        "ssh://gpu1/x.log": SSH,
        "metrics+http://h:8000/metrics": METRICS,
        "metrics+ssh://gpu1/8000": METRICS,
    }
    for text, kind in cases.items():
        assert kind_of(parse_source_spec(text)) is kind, text


def test_labels_and_places(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.log").write_text("x\n")

    def answers(text: str) -> tuple:
        s = parse_source_spec(text)
        k = kind_of(s)
        return k.label(s), k.where(s), k.location(s), k.host(s), k.local_path(s)

    here = str(tmp_path)
    assert answers("a.log") == ("a.log", "a.log", f"{here}/a.log", None, f"{here}/a.log")
    assert answers("x=a.log") == ("x", "a.log", f"{here}/a.log", None, f"{here}/a.log")
    assert answers("logs/*.log") == ("*.log", "newest of logs/*.log", f"{here}/logs/*.log", None, None)
    assert answers("-") == ("stdin", "standard input", "standard input", None, None)
    assert answers("cmd:kubectl logs -f p") == (
        "cmd:kubectl",
        "$ kubectl logs -f p",
        "$ kubectl logs -f p",
        None,
        None,
    )
    assert answers("me@gpu1:/d/x.log") == (
        "gpu1:x.log",
        "ssh me@gpu1:/d/x.log",
        "ssh me@gpu1:/d/x.log",
        "gpu1",
        None,
    )
    assert answers("ssh://gpu1:2222/d/x.log")[1] == "ssh gpu1:2222:/d/x.log"
    assert answers("metrics+http://gpu3:8000/metrics")[3] == "gpu3"
    assert answers("metrics+http://127.0.0.1:8000/metrics")[3] is None  # this machine
    assert answers("metrics+ssh://gpu2/8000")[3] == "gpu2"


def test_whole_files_for_summary_and_replay(tmp_path):
    old, new = tmp_path / "a.log", tmp_path / "b.log"
    old.write_text("x\n")
    new.write_text("y\n")
    os.utime(old, (time.time() - 60, time.time() - 60))
    glob = parse_source_spec(f"{tmp_path}/*.log")
    assert kind_of(glob).whole_file(glob) == str(new) == newest_match(f"{tmp_path}/*.log")
    os.utime(new, (time.time() - 120, time.time() - 120))
    assert kind_of(glob).whole_file(glob) == str(old)  # by modification time, not by name
    assert newest_match(f"{tmp_path}/*.nothing") is None
    assert kind_of(parse_source_spec("-")).whole_file(parse_source_spec("-")) is None


def test_the_config_is_read_only_when_a_text_could_name_something(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "none"))
    loads = []
    monkeypatch.setattr(ConfigRef, "get", lambda self: loads.append(1) or None)
    ref = ConfigRef()
    assert [s.kind for s in expand_source_args(["run", "a/b.log", "x=logs/*.log"], ref)] == [
        "file",
        "file",
        "glob",
    ]
    assert loads == []  # no default file: nothing to read
    ref = ConfigRef(str(tmp_path / "c.toml"))
    expand_source_args(["a/b.log", "cmd:cat x", "-"], ref)
    assert loads == []  # no text could be a name
    expand_source_args(["run"], ref)
    assert loads  # a bare word could be


def test_config_errors_are_source_errors(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text("[sources]\nx = 3\n")
    with pytest.raises(SourceSpecError, match="c.toml"):
        parse_source_spec("x", ConfigRef(str(bad)))
    with pytest.raises(SourceSpecError, match="config file not found"):
        ConfigRef(str(tmp_path / "missing.toml")).get()
    good = tmp_path / "g.toml"
    good.write_text(
        '[sources]\nrun = { source = "/l/run.log", label = "the run" }\n[pairs]\nab = ["run", "-"]\n'
    )
    ref = ConfigRef(str(good))
    s = parse_source_spec("run", ref)
    assert (s.kind, s.target, s.name, s.config_name) == ("file", "/l/run.log", "the run", "run")
    assert [x.name for x in expand_source_args(["ab"], ref)] == ["the run", "stdin"]
    with pytest.raises(SourceSpecError, match="only once"):
        expand_source_args(["ab", "-"], ref)
    assert spec_module.NAME_RX.fullmatch("run") and not spec_module.NAME_RX.fullmatch("a/b")
