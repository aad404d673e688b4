"""One output rule (issue 29 item 6), the functions: CSV cells inert (control characters shown,
spreadsheet formulas kept from running), bytes that are not UTF-8 written escaped in text and in
JSON, and the app's CSV export (``e``) written through them."""

from __future__ import annotations

import csv
import io
import json

from _segments_util import ARGS, batch, dec

from tui.core.model.sanitize import UNSAFE, csv_cell, csv_row, csv_writer, json_text, visible
from tui.panes.state import PaneState
from tui.screens.records_csv import write_records

RAW_NAME = "a\udc9b2Jb\udc9d0;t.log"  # os.fsdecode(b"a\x9b2Jb\x9d0;t.log")


def test_formula_cells_are_quoted_and_numbers_are_not():
    assert csv_row(['=HYPERLINK("x")', "+1+1", "-x", "@SUM(A1)", "\tx", "\rx"]) == [
        '\'=HYPERLINK("x")',
        "'+1+1",
        "'-x",
        "'@SUM(A1)",
        "'\tx",
        "␍x",  # CR shown (visible): nothing left to run
    ]
    assert csv_row(["-1.5", "+2", "-3e-2", ".5", 7, -2.5, None, "", "a=b"]) == [
        "-1.5",
        "+2",
        "-3e-2",
        ".5",
        7,
        -2.5,
        None,
        "",
        "a=b",
    ]


def test_csv_cells_show_control_sequences_and_raw_bytes():
    cell = csv_cell("x\x1b]2;pwned\x07 \x9b2J \u202eevil " + RAW_NAME)
    assert not set(cell) & UNSAFE
    assert cell == "x␛]2;pwned␇ ␛[2J ⟨U+202E⟩evil a\\x9b2Jb\\x9d0;t.log"


def test_raw_bytes_are_written_escaped_in_text_and_json():
    assert visible(RAW_NAME) == "a\\x9b2Jb\\x9d0;t.log"
    assert visible("lone \ud800") == "lone \\ud800"
    out = json_text({"path": RAW_NAME, RAW_NAME: 1})
    out.encode("utf-8")  # valid UTF-8: no surrogate left (this would raise)
    assert json.loads(out) == {"path": "a\\x9b2Jb\\x9d0;t.log", "a\\x9b2Jb\\x9d0;t.log": 1}


def test_csv_writer_writes_every_row_through_the_rule():
    buf = io.StringIO()
    csv_writer(buf).writerows([["=1+1", "\x1b[2J"], [1, "-1"]])
    assert list(csv.reader(io.StringIO(buf.getvalue()))) == [["'=1+1", "␛[2J"], ["1", "-1"]]


def test_the_apps_csv_export_is_inert(tmp_path):
    st = PaneState("=cmd|' /C calc'!A0\x1b]0;title\x07", where=f"/logs/{RAW_NAME}")
    st.feed(batch([ARGS, dec(1), dec(2)]))
    path = tmp_path / "records.csv"
    assert write_records(path, [st]) == 2
    data = path.read_bytes()
    assert b"\x1b" not in data and b"\x07" not in data
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    assert rows[1][0] == "'=cmd|' /C calc'!A0␛]0;title␇"
    assert rows[1][1] == "/logs/a\\x9b2Jb\\x9d0;t.log"
    assert rows[1][8] == "2.5"
