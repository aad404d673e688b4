"""``summary --json --history`` of a set with a binary member (a gzip of zeros): the member is
named in ``files[].problem`` and a warning, and the rest of the set is read (issue 29)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from _cli_util import run_cli
from _compress_util import ROOT


def test_a_binary_member_of_a_history_set_is_named_in_files_problem(tmp_path: Path) -> None:
    sample = (ROOT / "sample_logs" / "sglang_eagle3_restart.log").read_bytes()
    (tmp_path / "server.log.1.gz").write_bytes(gzip.compress(bytes(32 << 20), 1))
    (tmp_path / "server.log").write_bytes(sample)
    out = run_cli("summary", "--json", "--history", str(tmp_path / "server.log"))
    assert out.returncode == 0, out.stderr
    src = json.loads(out.stdout)["sources"][0]
    old, live = src["files"]
    assert old["path"].endswith("server.log.1.gz") and "binary" in old["problem"] and old["bytes"] == 0
    assert live["problem"] is None and live["bytes"] == len(sample) and src["records"] > 0
    assert any("server.log.1.gz" in w and "binary" in w for w in src["warnings"])
