"""Huge, binary and invalid UTF-8 lines through ``specwatch summary`` (the CLI as a subprocess)."""

from __future__ import annotations

import json

from _cli_util import run_cli


def test_huge_binary_and_invalid_utf8_lines_through_the_cli(tmp_path):
    good = (
        b"[2026-01-01 00:00:00 TP0] Decode batch, #running-req: 4, #token: 9, token usage: 0.01, accept len: 2.50, "
        b"accept rate: 0.50, cuda graph: True, gen throughput (token/s): 10.00, #queue-req: 0\n"
    )
    data = (
        good
        + b"\xff\xfe\xfa\x00\x00 [2026-01-01 00:00:00 TP0] Decode batch, #running-req: \xc3\x28\n"
        + good
        + b"Decode batch, #running-req: "
        + b"9" * (3 << 20)
        + b"\n"  # a 3 MiB line
        + b"x" * (2 << 20)
        + good  # a 2 MiB line glued to a good one: one line, not a record
        + good.rstrip(b"\n")
    )  # a last line without newline
    path = tmp_path / "bad.log"
    path.write_bytes(data)
    out = run_cli("summary", "--json", str(path))
    assert out.returncode == 0, out.stderr
    src = json.loads(out.stdout)["sources"][0]
    assert src["lines"] == 6
    assert src["accept_len"]["n"] == 3 and src["accept_len"]["mean"] == 2.5
    assert src["malformed"] == 1  # the invalid UTF-8 decode line
    # the 3 MiB line and the 2 MiB one: counted with their length, never parsed
    assert src["oversized"]["lines"] == 2 and src["oversized"]["largest"] == len(
        "Decode batch, #running-req: "
    ) + (3 << 20)
    assert src["records"] == 3
