"""Hostile input through the headless outputs: log text nobody controls, absurd values and huge
lines (the corpus: ``_hostile_util``). Through ``summary`` (text and JSON), ``stream`` (text and
JSONL), error messages and the Prometheus exporter: no ESC byte (nor any other control a terminal
obeys) in human-readable output, no crash, bounded memory; JSON keeps the raw text. The app and a
real terminal: ``test_hostile_app.py``.
"""

from __future__ import annotations

import json
import re

import pytest
from _hostile_util import (
    SEQUENCES,
    TITLE,
    decode,
    forty_lines,
    run_cli_peak,
    strings,
    unsafe_in,
    write_hostile,
)


# -- summary and stream ------------------------------------------------------------------------------
def test_summary_text_and_json(tmp_path):
    log = write_hostile(tmp_path / "hostile\x1b]2;name-title\x07.log")
    r, _ = run_cli_peak("summary", str(log))
    out, err = r.stdout.decode(), r.stderr.decode()
    assert r.returncode == 0, err
    assert not unsafe_in(out) and not unsafe_in(err)
    assert "␛]2;pwned-title␇" in out  # the draft path, shown
    assert "out of range" in out  # absurd accept lens: counted, left out, shown as a warning
    r, _ = run_cli_peak("summary", "--json", str(log))
    assert r.returncode == 0, r.stderr
    assert b"\x1b" not in r.stdout  # JSON escapes it...
    d = json.loads(r.stdout)["sources"][0]
    assert any(TITLE in v for v in strings(d["segments"]))  # ...and keeps the raw text
    assert d["source"] == str(log)


@pytest.mark.parametrize("jsonl", [False, True], ids=["text", "jsonl"])
def test_stream_no_follow(tmp_path, jsonl):
    log = write_hostile(tmp_path / "hostile\x1b]2;name-title\x07.log")
    r, _ = run_cli_peak("stream", "--no-follow", *(["--jsonl"] if jsonl else []), str(tmp_path / "*.log"))
    out, err = r.stdout.decode("utf-8"), r.stderr.decode()
    assert r.returncode == 0, err
    assert "\x1b" not in out and not unsafe_in(err)
    if not jsonl:
        assert not unsafe_in(out)
        assert "hostile␛]2;name-title␇.log" in out and "accept_len=1.00e+308" in out
        return
    objs = [json.loads(line) for line in out.splitlines()]
    recs = [o for o in objs if o["kind"] == "record"]
    assert any(o["accept_len"] is None for o in recs)  # nan / inf: null, never a made-up number
    assert any(o["accept_len"] == 1e308 for o in recs) and any(o["accept_len"] == -2.5 for o in recs)
    raws = "".join(o.get("raw") or "" for o in objs)
    assert TITLE in raws and SEQUENCES["single"] in raws  # JSON keeps the raw text
    assert {o["path"] for o in objs if o.get("path")} == {str(log)}


def test_cli_error_messages_are_shown_not_obeyed(tmp_path):
    missing_file = tmp_path / f"gone{TITLE}.log"
    r, _ = run_cli_peak("summary", str(missing_file))
    err = r.stderr.decode()
    assert r.returncode == 2 and "no such file" in err
    assert not unsafe_in(err) and "␛]2;pwned-title␇" in err
    r, _ = run_cli_peak("stream", "--no-follow", str(missing_file))
    err = r.stderr.decode()
    assert r.returncode == 1 and not unsafe_in(err), err


def test_10mb_line_and_50mb_of_random_bytes_in_bounded_memory(tmp_path):
    log = write_hostile(tmp_path / "big.log", big=True)
    size = log.stat().st_size
    assert size > 60 << 20  # reading it whole would take the process past 100 MiB
    r, rss = run_cli_peak("summary", "--json", str(log))
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)["sources"][0]
    assert d["oversized"]["lines"] >= 1 and d["oversized"]["largest"] >= 10 << 20
    examples = {e["bytes"] for e in d["oversized"]["examples"]}
    assert len(b"Decode batch, accept len: 9.99, ") + 6 * (10 * 1024 * 1024 // 6) in examples
    assert 9.99 not in (d["accept_len"]["max"],)  # the 10 MB line was not parsed
    assert rss < 100 * 1024, f"summary peaked at {rss // 1024} MiB on a {size >> 20} MiB file"
    r, rss = run_cli_peak("summary", str(log))
    assert r.returncode == 0 and not unsafe_in(r.stdout.decode()), r.stderr
    assert "oversized" in r.stdout.decode()
    for jsonl in (False, True):
        r, rss = run_cli_peak("stream", "--no-follow", *(["--jsonl"] if jsonl else []), str(log))
        out = r.stdout.decode("utf-8")
        assert r.returncode == 0, r.stderr
        assert "\x1b" not in out and (jsonl or not unsafe_in(out))
        assert max(map(len, out.splitlines())) < 64 * 1024  # no line carries the 10 MB one
        assert rss < 100 * 1024, f"stream peaked at {rss // 1024} MiB on a {size >> 20} MiB file"
        if jsonl:
            over = [json.loads(x) for x in out.splitlines() if '"oversized"' in x]
            assert any(o["kind"] == "oversized" and o["bytes"] >= 10 << 20 for o in over)


def test_40_line_log_with_1e308_summary_exits_0(tmp_path):
    log = forty_lines(tmp_path / "one.log")
    for args in (["summary", str(log)], ["summary", "--json", str(log)]):
        r, _ = run_cli_peak(*args)
        assert r.returncode == 0, r.stderr
        assert b"Traceback" not in r.stderr
        assert not re.search(rb"\d{20}", r.stdout)  # no 300-digit number
    text = run_cli_peak("summary", str(log))[0].stdout.decode()
    assert "1 accept len out of range" in text and "max 2.90" in text  # left out of the statistics


def _followed(name: str, lines: list[str]):
    from tui.core.export.metrics import Exported
    from tui.core.pipeline.follow import Followed
    from tui.core.sources.base import EventKind, LineBatch, SourceEvent

    st = Followed(name, track_arrivals=True)
    st.feed(SourceEvent(name, EventKind.OPENED, "opened"))
    st.feed(LineBatch(name, lines, list(range(len(lines))), 1))
    return Exported(st, "box1", "file", name)


def test_exporter_serves_absurd_values_and_isolates_a_failing_source(monkeypatch):
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    import tui.core.export.metrics as em

    absurd = [decode(i, al) for i, al in enumerate(["1e308", "nan", "inf", "-2.5", "1e200"] * 8)]
    good = [decode(i, f"2.{i % 10}0") for i in range(40)]
    sources = [_followed("absurd", absurd), _followed("good", good), _followed("broken", good)]
    reg = CollectorRegistry()
    reg.register(em.SpecwatchCollector(sources))

    def scrape() -> dict[tuple[str, str], float]:
        out = {}
        for fam in text_string_to_metric_families(generate_latest(reg).decode()):
            for s in fam.samples:
                if s.name == "specwatch_source_export_error":
                    out[(s.name, s.labels["source"] + "/" + s.labels["error"])] = s.value
                elif "source" in s.labels and s.labels.get("rank", "all") == "all":
                    out[(s.name, s.labels["source"])] = s.value
        return out

    got = scrape()  # one scrape for all: values that overflow arithmetic never fail the others
    # the absurd source is served, or (while its statistics cannot hold such values) left out and
    # counted, never failing the scrape
    assert got.get(("specwatch_source_records_total", "absurd")) == 40 or (
        got[("specwatch_source_export_error", "absurd/OverflowError")] == 1
    )
    assert got[("specwatch_source_records_total", "good")] == 40
    assert got[("specwatch_accept_len_mean", "good")] == pytest.approx(
        sum(2 + (i % 10) / 10 for i in range(40)) / 40
    )

    real = em._metric_set

    def failing(f, lv, *args):
        if lv[0] == "broken":
            raise OverflowError("math range error")
        return real(f, lv, *args)

    monkeypatch.setattr(em, "_metric_set", failing)
    got = scrape()  # one source fails: the others are served, the failure is counted
    assert got[("specwatch_source_export_error", "broken/OverflowError")] == 1
    assert ("specwatch_source_records_total", "broken") not in got
    assert got[("specwatch_source_records_total", "good")] == 40
    assert got[("specwatch_source_records_total", "absurd")] == 40
