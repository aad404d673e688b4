"""Paths and labels that are not UTF-8 (issue 29 item 6): a file whose name holds the bytes 0x9b
(CSI on 8-bit terminals) and 0x9d (OSC), and a label given with a raw byte, are written escaped
(``\\x9b``) by the text outputs and make no JSON output invalid UTF-8 (a raw byte label used to
make every ``stream --jsonl`` line fail ``json.loads``)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from _cli_util import run_cli

ROOT = Path(__file__).resolve().parents[2]
NAME = b"srv\x9b2J\x9d0;t.log"
SHOWN = "srv\\x9b2J\\x9d0;t.log"
LABEL = b"gpu\xff0"


def _log(tmp_path: Path) -> str:
    path = os.path.join(os.fsencode(tmp_path), NAME)
    shutil.copyfile(ROOT / "sample_logs" / "ab_a.log", path)
    return os.fsdecode(path)


def _no_raw_bytes(out: bytes) -> str:
    assert b"\x9b" not in out and b"\x9d" not in out and b"\xff" not in out
    return out.decode("utf-8")  # valid UTF-8 (raises otherwise)


def test_summary_text_and_json_write_the_name_escaped(tmp_path):
    log = _log(tmp_path)
    r = run_cli("summary", log, text=False)
    assert r.returncode == 0, r.stderr
    assert SHOWN in _no_raw_bytes(r.stdout)
    r = run_cli("summary", "--json", log, text=False)
    assert r.returncode == 0, r.stderr
    doc = json.loads(_no_raw_bytes(r.stdout))
    assert doc["sources"][0]["source"].endswith(SHOWN)


def test_stream_jsonl_of_a_raw_name_and_a_raw_label_is_valid_utf8(tmp_path):
    log = _log(tmp_path)
    label = os.fsdecode(LABEL)
    r = run_cli("stream", "--jsonl", "--no-follow", f"{label}={log}", text=False)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(line) for line in _no_raw_bytes(r.stdout).splitlines()]
    assert len(lines) > 100
    assert {d["source"] for d in lines} == {"gpu\\xff0"}
    assert any(SHOWN in d.get("path", "") for d in lines if d["kind"] == "event")


def test_stream_text_of_a_raw_label_is_escaped(tmp_path):
    r = run_cli("stream", "--no-follow", f"{os.fsdecode(LABEL)}={_log(tmp_path)}", text=False)
    assert r.returncode == 0, r.stderr
    text = _no_raw_bytes(r.stdout)
    assert "[gpu\\xff0]" in text and SHOWN in text


def test_export_serves_a_raw_label_and_name_escaped(tmp_path):
    """``export``'s /metrics (text, UTF-8) with the same label and file: escaped, valid UTF-8."""
    import subprocess
    import sys
    import urllib.request

    from _wait import wait_until

    cmd = [sys.executable, "-m", "tui", "export", "--prometheus", "127.0.0.1:0"]
    proc = subprocess.Popen(
        [*cmd, f"{os.fsdecode(LABEL)}={_log(tmp_path)}"],
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path)},
        cwd=ROOT,
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline().decode("utf-8")
        url = first.split("serving ", 1)[1].split(" ", 1)[0]

        def page() -> bytes | None:
            with urllib.request.urlopen(url, timeout=30) as resp:
                body = resp.read()
            return body if b"specwatch_accept_len" in body else None

        text = _no_raw_bytes(wait_until(page, what="the exporter's numbers"))
        assert 'source="gpu\\\\xff0"' in text  # the label value's backslash, escaped by the format
    finally:
        proc.terminate()
        proc.wait(timeout=60)
