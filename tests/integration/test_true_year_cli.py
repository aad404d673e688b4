"""``specwatch stream`` gives an old vLLM log its own year (the CLI as a subprocess)."""

from __future__ import annotations

import json

from _cli_util import run_cli
from _scan_util import old_log


def test_stream_gives_an_old_vllm_log_its_own_year(tmp_path):
    log = old_log(tmp_path)
    out = run_cli("stream", "--jsonl", "--no-follow", str(log))
    assert out.returncode == 0, out.stderr
    stamps = [json.loads(x)["timestamp"] for x in out.stdout.splitlines() if '"kind": "record"' in x]
    assert stamps == ["2024-11-20 11:02:10", "2024-11-20 11:02:20", "2024-11-20 11:02:30"]
