"""The year of vLLM's year-less stamps when the log comes through a pipe (the CLI as a subprocess)."""

from __future__ import annotations

from _cli_util import run_cli
from _scan_util import (
    vllm_log,
)


def test_vllm_from_a_pipe_gets_no_year(tmp_path):
    """A pipe's mtime is when it was made, not the log's age: no year, so no timestamp."""

    f = tmp_path / "v.log"
    f.write_bytes(vllm_log(9, 200))
    piped = run_cli("summary", "--json", "-", input=f.read_bytes(), text=False)
    assert piped.returncode == 0, piped.stderr
    import json

    seg = json.loads(piped.stdout)["sources"][0]["segments"][0]
    assert seg["records"] > 0 and seg["first_record_time"] is None
