"""A quantity defined only under tests/ (tests/_draft_latency.py: ``draft_latency_ms``, with a
family whose lines print it) shows in every output: summary's JSON (validated by its schema),
text and Markdown (the CLI as a subprocess), the app's numbers (Pilot), the exporter's /metrics
and the records CSV — with no other file edited."""

from __future__ import annotations

import csv
import json
from statistics import fmean

import pytest
from _cli_util import run_cli
from _draft_latency import CLI, install, latencies, uninstall, write_log
from _export_util import Running, one
from _tui_util import _isolated_config, replay_app, wait_ended  # noqa: F401

from tui.screens.records_csv import write_records
from tui.widgets.numbers import NumbersPanel

MEAN = fmean(latencies())


@pytest.fixture
def log(tmp_path):
    return write_log(tmp_path / "bench.log")


@pytest.fixture
def installed():
    install()
    try:
        yield
    finally:
        uninstall()


def _summary(*args: str) -> str:
    out = run_cli("summary", *args, python=("-c", CLI))
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_summary_json_text_and_markdown_show_it(log) -> None:
    d = json.loads(_summary("--json", str(log)))
    src = d["sources"][0]
    assert src["family"] == "benchllm" and src["records"] == len(latencies())
    lat = src["more"]["draft_latency_ms"]
    assert lat["n"] == len(latencies()) and lat["mean"] == pytest.approx(MEAN, rel=1e-12)
    assert src["segments"][0]["more"]["draft_latency_ms"]["mean"] == pytest.approx(MEAN, rel=1e-12)
    schema = json.loads(_summary("--json-schema"))
    import jsonschema

    jsonschema.validate(d, schema)
    text = _summary(str(log))
    assert f"draft latency (ms)  {MEAN:.2f}" in text, text
    md = _summary("--format", "markdown", str(log))
    assert f"| draft latency (ms) | {MEAN:.2f}" in md, md
    # without the quantity (a plain run), the same log has no such figure: nothing made up
    plain = run_cli("summary", "--json", "--allow-empty", str(log))
    assert plain.returncode == 0 and "draft_latency" not in plain.stdout


async def test_the_app_and_its_csv_show_it(log, installed, tmp_path) -> None:
    app = replay_app(str(log), speed=None)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        panel = app.screen.query_one(NumbersPanel)
        assert panel.values is not None
        (lat,) = panel.values.more
        assert lat.name == "draft_latency_ms" and lat.mean == pytest.approx(MEAN, rel=1e-12)
        assert "draft latency" in panel.plain and f"{MEAN:.2f}" in panel.plain, panel.plain
        path = tmp_path / "records.csv"
        rows = write_records(path, app.screen.states)
    assert rows == len(latencies())
    table = list(csv.DictReader(path.open()))
    assert [float(r["draft_latency_ms"]) for r in table] == latencies()


async def test_the_exporter_serves_it(log, installed) -> None:
    async with Running([str(log)]) as run:
        await run.wait_records([len(latencies())])
        got = await run.scrape()
    lab = {"source": "bench.log", "rank": "all", "segment": "0"}
    assert one(got, "specwatch_draft_latency_ms_mean", **lab) == pytest.approx(MEAN, rel=1e-12)
    assert one(got, "specwatch_draft_latency_ms_values", **lab) == len(latencies())


def test_stream_shows_it(log) -> None:
    out = run_cli("stream", "--no-follow", str(log), python=("-c", CLI))
    assert out.returncode == 0, out.stderr
    assert f"draft_latency_ms={latencies()[0]:.2f}" in out.stdout, out.stdout[:500]
    out = run_cli("stream", "--jsonl", "--no-follow", str(log), python=("-c", CLI))
    assert out.returncode == 0, out.stderr
    records = [o for o in map(json.loads, out.stdout.splitlines()) if o["kind"] == "record"]
    assert [o["more"]["draft_latency_ms"] for o in records] == latencies()
