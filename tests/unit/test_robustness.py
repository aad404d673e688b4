"""Bad input never crashes anything and never goes unreported."""

from __future__ import annotations

import io
import json

from _hypothesis_util import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.core.formats import LineParser
from tui.core.model.records import Malformed
from tui.core.pipeline.whole import summarize_stream
from tui.core.sources.compressed import decompressing

ANCHORS = [
    "Decode batch",
    "Decode batch.",
    "Decode batch, ",
    "SpecDecoding metrics: ",
    "Speculative metrics: ",
    "server_args=ServerArgs(",
    "'speculative_num_steps': ",
    "accept len: ",
    "accept rate: ",
    "Engine 000: ",
    "Avg prompt throughput: ",
    "draft acceptance = ",
    "Per-position acceptance rate: ",
    ", ",
    ": ",
    "%",
    "nan",
    "[2026-01-01 00:00:00 TP0] ",
    "(APIServer pid=1) INFO 05-19 10:30:33 [m.py:1] ",
    "\x1b[1;36m",
    "\ufffd[0m",
    "**",
    "`",
    "> ",
    "(",
    ")",
    "{",
    "}",
    "'",
    "=",
    "1.5",
    "-3",
    "inf",
    "\x00",
]

line_text = st.lists(st.one_of(st.sampled_from(ANCHORS), st.text(max_size=12)), max_size=25).map("".join)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(line_text, min_size=1, max_size=20))
def test_parser_never_fails_internally(lines):
    p = LineParser("fuzz")
    for i, line in enumerate(lines, 1):
        item = p.feed(line, i, 0)
        if isinstance(item, Malformed):
            assert not item.reason.startswith("parser error"), (line, item.reason)


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(
        st.one_of(st.binary(max_size=200), line_text.map(lambda s: s.encode("utf-8", "surrogatepass"))),
        max_size=30,
    )
)
def test_summary_reads_any_bytes(pieces):
    data = b"\n".join(pieces)
    s = summarize_stream(io.BytesIO(data), "fuzz")
    d = s.result()
    reader, kind = decompressing(io.BytesIO(data))
    if kind is not None:  # a compression's magic first: read decompressed, or the damage is said
        text = reader.read()
        if reader.problem:
            assert any(kind in w and reader.problem in w for w in s.input_warnings), s.input_warnings
        data = text
    assert d["lines"] == (data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1))
    json.dumps(d, allow_nan=True)
