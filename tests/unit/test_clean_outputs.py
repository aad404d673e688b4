"""No control or bidi character of the log's in what specwatch serves or writes as JSON: the
exporter's scrape (label values and HELP texts through ``visible``) and ``json_text``."""

from __future__ import annotations

import json

from _hostile_util import DRAFT, SEQUENCES, TITLE, decode, hostile_lines, server_args
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from tui.core.export.metrics import Exported, SpecwatchCollector
from tui.core.model.sanitize import UNSAFE, json_text, visible
from tui.core.pipeline.follow import Followed
from tui.core.sources.base import EventKind, LineBatch, SourceEvent
from tui.core.sources.lines import oversized_line

HOSTILE = "".join(SEQUENCES.values())
BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]


def _hostile_source() -> Exported:
    name = f"/logs/srv{TITLE}\u202e.log"
    lines = [server_args(DRAFT).replace("meta-llama/Llama-3.1-8B-Instruct", f"/m/{HOSTILE}é中", 1)]
    lines += hostile_lines()[1:]
    lines += [oversized_line(3 << 20), decode(50), oversized_line(5 << 20)]
    st = Followed(name, f"lab{TITLE}\x9b2J", track_arrivals=True)
    st.feed(SourceEvent(name, EventKind.OPENED, "opened"))
    items = st.feed(LineBatch(name, lines, list(range(len(lines))), 1))
    ex = Exported(st, "host\x1b[2J\u2066", "file", name)
    ex.count(items)
    return ex


def _extra():
    from prometheus_client.core import GaugeMetricFamily

    fam = GaugeMetricFamily("specwatch_test_extra", f"help{TITLE}", labels=["v"])
    fam.add_metric([f"v{TITLE}\u202e"], 1)
    return [fam]


def test_scrape_holds_no_control_or_bidi_character_of_the_log():
    ex = _hostile_source()
    model = ex.state.stats.current.config.model_path  # as the parser read it (hostile still)
    assert model is not None and set(model) & UNSAFE and "é中" in model
    reg = CollectorRegistry()
    reg.register(SpecwatchCollector([ex], extra=_extra))
    text = generate_latest(reg).decode("utf-8")
    bad = {c for line in text.split("\n") for c in line if c in UNSAFE}  # LF: the format's line end
    assert not bad, sorted(f"U+{ord(c):04X}" for c in bad)
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    # the hostile values are served, shown instead of obeyed; other Unicode as it is
    info = fams["specwatch_segment_info"].samples
    assert [s.labels["model"] for s in info] == [visible(model)]
    assert fams["specwatch_source_info"].samples[0].labels["source"] == visible(f"lab{TITLE}\x9b2J")
    assert fams["specwatch_test_extra"].documentation == visible(f"help{TITLE}")
    assert "␛]2;pwned-title␇" in text and "⟨U+202E⟩" in text and "é中" in text


def test_refused_and_oversized_counts_are_served():
    reg = CollectorRegistry()
    reg.register(SpecwatchCollector([_hostile_source()]))
    fams = {f.name: f for f in text_string_to_metric_families(generate_latest(reg).decode())}

    def total(name: str) -> list[Sample]:
        return [s for s in fams[name].samples if s.name.endswith("_total")]

    assert [s.value for s in total("specwatch_oversized_lines")] == [2]
    assert [s.value for s in total("specwatch_oversized_bytes")] == [8 << 20]
    refused = {(s.labels["metric"], s.labels["reason"]): s.value for s in total("specwatch_values_refused")}
    # nan, inf, -inf are not finite; 1e308, -2.5, 1e200, 0 lie outside an accept len's range
    assert refused == {("accept_len", "nonfinite"): 3, ("accept_len", "out_of_range"): 4}, refused


def test_json_text_escapes_exactly_the_unsafe_characters():
    for c in map(chr, (*range(0xD800), *range(0xE000, 0x10000))):
        got = json_text(c)
        if c in UNSAFE:
            assert c not in got and got.startswith('"\\u') or got in ('"\\n"', '"\\r"', '"\\b"', '"\\f"')
            assert json.loads(got) == c
        elif c not in '"\\\t':
            assert got == f'"{c}"', (hex(ord(c)), got)
    assert json_text("\x9b\u202e\x7f") == '"\\u009b\\u202e\\u007f"'


def test_json_text_round_trips_hostile_values():
    value = {
        f"key{TITLE}\x9b": hostile_lines() + [HOSTILE, "é中 ✓", *BIDI],
        "nested": {"n": [1.5, None, True], "s": f"\x85{HOSTILE}"},
    }
    for kw in ({}, {"indent": 2}, {"allow_nan": False, "default": str}):
        text = json_text(value, **kw)
        assert not set(text) & UNSAFE - {"\n"} and ("\n" not in text or kw.get("indent"))
        assert json.loads(text) == value
        assert "é中 ✓" in text  # other Unicode stays readable
