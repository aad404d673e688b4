"""Behaviour kept across changes of shape: ``summary --json`` of every sample, real and format
log gives the records, n, means, pooled values and segments of the snapshot taken before the
format plug-ins and the one pipeline (tests/_summary_snapshot.py)."""

from __future__ import annotations

import json

import pytest

from tests._cli_util import summary_json
from tests._summary_snapshot import SNAPSHOT, take


@pytest.mark.parametrize("native", ["1", "0"])
def test_summary_of_every_bundled_log_matches_the_snapshot(native: str, monkeypatch) -> None:
    monkeypatch.setenv("SPECWATCH_NATIVE", native)
    expected = json.loads(SNAPSHOT.read_text())
    got = json.loads(json.dumps(take(lambda *files: summary_json("--allow-empty", *files)), sort_keys=True))
    assert sorted(got) == sorted(expected)
    for path in expected:
        assert got[path] == expected[path], path
