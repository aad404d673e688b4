"""A log that counts accepted and drafted tokens but prints no accept len (llama.cpp's legacy
timing lines, without the statistics lines whose verify steps would give the length): what it determines is the accept rate pooled from the counts, and ``summary``,
the app's numbers and the exporter all show that one value (they used to disagree: the app said
"no accept len values yet" and the exporter served no acceptance at all)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli_util import summary_json
from _export_util import Running, one
from _tui_util import _isolated_config, replay_app, wait_ended  # noqa: F401

from tui.core.pipeline.whole import summarize_file
from tui.core.stats.metrics import POOLED, headline
from tui.panes.pane_numbers import pane_numbers
from tui.widgets.numbers import NumbersPanel

FIXTURE = Path("tests/fixtures/formats/llamacpp_print_timing_legacy_rate.log")


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The fixture without its statistics lines (whose verify steps would give the pooled
    length): the per-request lines alone count tokens and print no length."""
    kept = [line for line in FIXTURE.read_text().splitlines(keepends=True) if "#gen drafts =" not in line]
    p = tmp_path_factory.mktemp("counts") / FIXTURE.name
    p.write_text("".join(kept))
    return str(p)


@pytest.fixture(scope="module")
def pooled_rate(log: str) -> float:
    src = summary_json(log)["sources"][0]
    assert src["accept_len"]["n"] == 0 and src["accept_len"]["pooled"] is None  # no drafts counted
    value = src["accept_rate"]["pooled"]["value"]
    assert value == pytest.approx(280 / 569)
    return value


def test_the_headline_is_the_pooled_rate(pooled_rate: float, log: str) -> None:
    stats = summarize_file(log, "x", workers=1).stats
    h = headline(stats.current.all)
    assert h is not None and (h.quantity, h.estimator) == ("accept_rate", POOLED)
    assert h.estimate.value == pytest.approx(pooled_rate, rel=1e-12)
    v = pane_numbers(stats)
    assert v.accept_rate.pooled is not None and v.accept_len.pooled is None
    assert v.accept_rate.pooled.value == pytest.approx(pooled_rate, rel=1e-12)
    assert v.warning is not None and "no accept len values" not in v.warning  # n=3: too few, said so


async def test_the_app_shows_the_pooled_rate(pooled_rate: float, log: str) -> None:
    app = replay_app(log, speed=None)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        text = app.screen.query_one(NumbersPanel).plain
    assert f"pooled Σaccepted/Σdrafted {pooled_rate:.3f}" in text, text
    assert "569 drafted tokens" in text and "no accept len values yet" not in text


async def test_the_exporter_serves_the_pooled_rate(pooled_rate: float, log: str) -> None:
    async with Running([log]) as run:
        await run.wait_records([3])
        got = await run.scrape()
    lab = {"source": "llamacpp_print_timing_legacy_rate.log", "rank": "all", "segment": "0"}
    assert one(got, "specwatch_accept_rate_pooled", **lab) == pytest.approx(pooled_rate, rel=1e-12)
    assert one(got, "specwatch_accepted_tokens_total", **lab) == 280
    assert not [k for k in got if k[0] == "specwatch_accept_len_pooled"]  # not determined: not made up
