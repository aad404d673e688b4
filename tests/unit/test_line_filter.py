"""The log tail's filter: text or ``re:`` regular expression (tui.panes.line_filter)."""

from __future__ import annotations

from tui.panes.line_filter import LineFilter, parse_filter

LINE = "[2026-01-01 00:00:00 TP0] Decode batch. #running-req: 12, accept len: 2.41, gen throughput (token/s): 300.1"


def test_text_filter_is_a_case_insensitive_substring():
    f, err = parse_filter("  ACCEPT len ")
    assert not err and f is not None and not f.regex and f.matches(LINE) and not f.matches("prefill")
    assert f.describe() == "ACCEPT len" and "containing" in f.notice()


def test_regex_filter_with_the_prefix():
    f, err = parse_filter(r"re:accept len: 2\.4\d")
    assert not err and f is not None and f.regex and f.matches(LINE)
    assert not f.matches(LINE.replace("2.41", "1.99"))
    assert f.describe() == r"regex accept len: 2\.4\d" and "regular expression" in f.notice()
    g, _ = parse_filter(r"re:RUNNING-REQ: 1\d")
    assert g is not None and g.matches(LINE)  # case-insensitive too


def test_invalid_regex_says_why_and_empty_means_every_line():
    f, err = parse_filter("re:accept (len")
    assert f is None and err.startswith("invalid regular expression 'accept (len': missing )")
    assert parse_filter("re:")[0] == LineFilter() and parse_filter("")[0] == LineFilter()
    assert LineFilter().matches("anything") and LineFilter().notice() == "log tail: every line"
