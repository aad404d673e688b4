"""``stream --jsonl`` and ``summary --json`` of a log (and a file name) full of control sequences,
C1 controls and bidi overrides: the bytes written hold none of them raw (each is a ``\\uXXXX``
escape), and the JSON still gives back the text as it was read."""

from __future__ import annotations

import json
import re

from _cli_util import run_cli
from _hostile_util import TITLE, decode, server_args, strings, write_hostile

from tui.core.model.sanitize import UNSAFE

# raw in UTF-8: ESC and the other C0 controls but LF, DEL, C1 (U+0080–U+009F), bidi overrides/isolates
RAW = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")
NAME = "srv\x1b]0;pwned\x07\x9b2J\u202eévil.log"
C1_BIDI = "\x9b31m\x9d0;c1\x9c \u202eevil\u202c \u2066iso\u2069"


def _log(tmp_path):
    """The hostile corpus, then a config value and a line that keep C1 and bidi characters."""
    log = write_hostile(tmp_path / NAME)
    with log.open("a", encoding="utf-8") as f:
        f.write(server_args(f"/d/x{C1_BIDI}") + "\n" + decode(59) + f" tail {C1_BIDI}\n")
    return log


def _assert_clean(out: bytes) -> str:
    found = sorted({m.group() for m in RAW.finditer(out)})
    assert not found, found
    text = out.decode("utf-8")
    assert not {c for c in text if c in UNSAFE and c != "\n"}
    return text


def test_stream_jsonl_writes_no_raw_control_or_bidi_character(tmp_path):
    log = _log(tmp_path)
    r = run_cli("stream", "--jsonl", "--no-follow", str(log), text=False)
    assert r.returncode == 0, r.stderr
    objs = [json.loads(line) for line in _assert_clean(r.stdout).splitlines()]
    raws = "".join(o.get("raw") or "" for o in objs)
    assert TITLE in raws and C1_BIDI in raws  # the values are kept
    assert {o["path"] for o in objs if o.get("path")} == {str(log)}
    assert b"\\u009b" in r.stdout and b"\\u202e" in r.stdout and "é".encode() in r.stdout


def test_summary_json_writes_no_raw_control_or_bidi_character(tmp_path):
    log = _log(tmp_path)
    r = run_cli("summary", "--json", str(log), text=False)
    assert r.returncode == 0, r.stderr
    d = json.loads(_assert_clean(r.stdout))["sources"][0]
    assert d["source"] == str(log)
    assert any(TITLE in v for v in strings(d["segments"]))
    assert any(C1_BIDI in v for v in strings(d["segments"]))
    assert b"\\u009b" in r.stdout and b"\\u202e" in r.stdout and "é".encode() in r.stdout
