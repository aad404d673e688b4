"""Hostile text in the core: every terminal control sequence is shown, never obeyed; absurd numbers are printed in a few digits; an oversized line is counted once in every summary reader."""

from __future__ import annotations

import math

import pytest
from _hostile_util import (
    SEQUENCES,
    unsafe_in,
)

from tui.core.model.sanitize import number, visible


# -- the sanitiser itself --------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_every_family_is_shown_not_obeyed(name):
    seq = SEQUENCES[name]
    out = visible(f"a {seq} b")
    assert not unsafe_in(out) and "\x1b" not in out
    assert out.startswith("a ") and out.endswith(" b")
    if "\x1b" in seq:
        assert "␛" in out  # visible, not silently dropped


def test_visible_keeps_text_and_markup_and_tab():
    s = "[2026-11-20 TP0] [bold]x[/bold]\tαβγ €"
    assert visible(s) is s
    assert visible("a\nb", keep_newlines=True) == "a\nb" and visible("a\nb") == "a␊b"
    assert visible("\x1b]2;t\x07") == "␛]2;t␇" and visible("\x9b2J") == "␛[2J"
    assert visible("\u202e") == "⟨U+202E⟩"


def test_numbers_never_print_absurd_digit_counts():
    for v in (1e200, -1e308, 1e9, 10**400):
        assert len(number(v)) <= 12, number(v)
    assert number(1e200) == "1.00e+200" and number(2.345) == "2.35" and number(-2.5, signed=True) == "-2.50"
    assert number(math.nan) == "nan" and number(math.inf, signed=True) == "+inf" and number(None) == "—"


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("chunk", [256 << 10, 8 << 20])
@pytest.mark.parametrize("kind", ["plain", "decode"])
def test_oversized_lines_count_in_every_summary_reader(tmp_path, monkeypatch, workers, chunk, kind):
    """Inside a chunk or across chunk ends, read in order or by workers: an oversized line is
    counted once with its length, the lines around it are read."""
    import tui.core.pipeline.ranges as summary_threads
    import tui.core.pipeline.whole as summary

    monkeypatch.setattr(summary, "PARALLEL_MIN", 0)

    monkeypatch.setattr(summary_threads, "MAX_RANGE", 0)  # ranges of CHUNK bytes, however sparse
    monkeypatch.setattr(summary, "CHUNK", chunk)
    from _scan_util import make_log  # canonical lines: the fast scanner takes them

    good = make_log(3, 3000)
    if kind == "plain":  # no anchor: the fast scanner alone would take it for an ordinary line
        long = b"x" * (2 << 20)
    else:
        long = b"Decode batch, accept len: 9.0, " + b"k: v, " * (600 << 10)
    path = tmp_path / "o.log"
    path.write_bytes(good + long + b"\n" + good)
    plain = tmp_path / "plain.log"
    plain.write_bytes(good * 2)
    ref = summary.summarize_file(str(plain), workers=1).result()
    d = summary.summarize_file(str(path), workers=workers).result()
    assert d["lines"] == ref["lines"] + 1 and d["records"] == ref["records"]
    assert (
        d["accept_len"]["n"] == ref["accept_len"]["n"] and d["accept_len"]["max"] == ref["accept_len"]["max"]
    )
    assert d["oversized"]["lines"] == 1
    assert [(e["line"], e["bytes"]) for e in d["oversized"]["examples"]] == [(3001, len(long))]
