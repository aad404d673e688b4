"""``specwatch export``: the exporter scraped over HTTP and parsed back with prometheus-client's
parser gives the core's numbers for the same logs; states and labels (the command as a subprocess:
tests/integration/test_export_cli.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _export_util import SAMPLES, Running, find, one
from _prom_util import FakeVllm, PromServer
from _wait import wait_until_async

from tui.cli.export import host_label, parse_listen
from tui.core.pipeline.whole import summarize_file
from tui.core.sources.spec import expand_source_args
from tui.core.stats import rates

ROOT = Path(__file__).parent.resolve().parents[1]


@pytest.mark.parametrize(
    "names", [["vllm_v1_eagle3.log", "ab_a.log"], ["sglang_eagle3_restart.log", "sglang_dp_attention.log"]]
)
async def test_exported_numbers_equal_the_core_statistics(names):
    ref = {n: summarize_file(str(SAMPLES / n), n, workers=1).stats for n in names}
    async with Running([str(SAMPLES / n) for n in names], segments=10) as run:
        await run.wait_records([ref[n].records for n in names])
        got = await run.scrape()
    for n in names:
        stats = ref[n]
        base = {"source": n, "host": "box1"}
        assert one(got, "specwatch_source_records_total", **base) == stats.records
        assert one(got, "specwatch_source_up", **base) == 1.0
        assert one(got, "specwatch_source_state", state="live", **base) == 1.0
        assert one(got, "specwatch_source_segments", **base) == len(stats.segments)
        for seg in stats.segments:
            lab = {
                **base,
                "segment": str(seg.index),
                "rank": "all",
                "current": "true" if seg is stats.current else "false",
            }
            labels, _ = find(got, "specwatch_records_total", **lab)[0]
            assert labels["model"] == seg.config.model_path and labels["config"] == seg.config.label()
            assert labels["family"] == seg.config.family
            al = seg.all.accept_len
            assert one(got, "specwatch_records_total", **lab) == seg.records
            assert one(got, "specwatch_accept_len_mean", **lab) == pytest.approx(al.mean, rel=1e-12)
            assert one(got, "specwatch_accept_len_window_mean", **lab) == pytest.approx(
                al.window_mean, rel=1e-12
            )
            assert one(got, "specwatch_accept_len_last", **lab) == al.last
            assert one(got, "specwatch_accept_len_values", **lab) == al.n
            assert one(got, "specwatch_accept_len_ci95_halfwidth", **lab) == pytest.approx(
                al.halfwidth(), rel=1e-9
            )
            a, b = rates.normalise_transform(seg.rate_definition().drafts_per_step)
            want = seg.to_dict()["accept_rate_normalized"]
            assert one(got, "specwatch_accept_rate_normalized_mean", **lab) == pytest.approx(
                want["mean"], rel=1e-12
            )
            assert one(got, "specwatch_accept_rate_normalized_window_mean", **lab) == pytest.approx(
                a + b * al.window_mean, rel=1e-12
            )
            if seg.all.drafted:
                assert one(got, "specwatch_accepted_tokens_total", **lab) == seg.all.accepted
                assert one(got, "specwatch_drafted_tokens_total", **lab) == seg.all.drafted
            else:
                assert not find(got, "specwatch_drafted_tokens_total", **lab)  # not known: not made up
            assert one(got, "specwatch_last_record_age_seconds", **lab) >= 0
            if len(seg.ranks) > 1:
                for rank, m in seg.ranks.items():
                    rl = {**lab, "rank": rank}
                    assert one(got, "specwatch_accept_len_mean", **rl) == pytest.approx(
                        m.accept_len.mean, rel=1e-12
                    )
                    assert one(got, "specwatch_records_total", **rl) == m.records


async def test_states_of_sources_that_are_not_there(tmp_path):
    missing = tmp_path / "later.log"
    server = PromServer(lambda: "", mode=500).start()
    port = server.port
    server.stop()  # nobody listens there now
    async with Running(
        [f"w={missing}", f"m=metrics+http://127.0.0.1:{port}/metrics"], options={"scrape_interval": 0.05}
    ) as run:
        await wait_until_async(
            lambda: {ex.state.status for ex in run.exp.sources} == {"waiting", "reconnecting"},
            what="both sources waiting",
            show=lambda: [ex.state.status for ex in run.exp.sources],
        )
        got = await run.scrape()
    assert one(got, "specwatch_source_state", source="w", state="waiting") == 1
    assert one(got, "specwatch_source_state", source="m", state="reconnecting") == 1
    assert one(got, "specwatch_source_up", source="m") == 0
    assert not find(got, "specwatch_accept_len_mean")  # no record: no number, never a 0
    assert one(got, "specwatch_records_total", source="w", segment="0", rank="all") == 0
    info = find(got, "specwatch_source_info", source="m")[0][0]
    assert info["kind"] == "metrics+http" and info["host"] == "box1"
    assert one(got, "specwatch_exporter_info") == 1


async def test_a_metrics_source_exported_with_its_host_and_model():
    fake = FakeVllm(engines=2, k=3)
    server = PromServer(fake.text).start()
    try:
        async with Running([f"gpu1=metrics+{server.url}"], options={"scrape_interval": 0.05}) as run:
            await wait_until_async(lambda: server.requests >= 2, what="a first scrape answered")  # the base
            fake.step(0, 30, [20, 10, 5])
            fake.step(1, 10, [10, 10, 10])
            await run.wait_records([2])
            got = await run.scrape()
    finally:
        server.stop()
    lab = {"source": "gpu1", "segment": "0", "current": "true"}
    assert one(got, "specwatch_accept_len_mean", rank="engine 0", **lab) == pytest.approx(1 + 35 / 30)
    assert one(got, "specwatch_accept_len_mean", rank="engine 1", **lab) == pytest.approx(4.0)
    assert one(got, "specwatch_accepted_tokens_total", rank="all", **lab) == 65
    assert one(got, "specwatch_drafted_tokens_total", rank="all", **lab) == 120
    labels = find(got, "specwatch_records_total", rank="all", **lab)[0][0]
    assert (labels["model"], labels["config"], labels["family"]) == (fake.model, "k=3", "vllm")
    # the printed vLLM rate is accepted / drafted: the normalised one agrees with it exactly here
    assert one(got, "specwatch_accept_rate_normalized_last", rank="engine 1", **lab) == pytest.approx(1.0)


def test_listen_addresses_and_host_labels():
    assert parse_listen("9477") == ("127.0.0.1", 9477)
    assert parse_listen(":9477") == ("0.0.0.0", 9477)
    assert parse_listen("0.0.0.0:9477") == ("0.0.0.0", 9477)
    assert parse_listen("[::]:9477") == ("::", 9477)
    assert parse_listen("10.1.2.3:80") == ("10.1.2.3", 80)
    for bad in ("x", "1:2:3", "[::]", "99999"):
        with pytest.raises(ValueError):
            parse_listen(bad)
    specs = expand_source_args(
        [
            "metrics+ssh://gpu7/8000",
            "metrics+http://127.0.0.1:8000/metrics",
            "metrics+https://gpu3.lan/metrics",
            "gpu2:/var/log/sglang.log",
            "/tmp/x.log",
        ]
    )
    assert [host_label(s, "me") for s in specs] == ["gpu7", "me", "gpu3.lan", "gpu2", "me"]


def run_cli(*args) -> int:
    """The export command in this process (its errors are CliError, exit status 2)."""
    import argparse

    from tui.cli import export

    parser = argparse.ArgumentParser()
    export.add_parser(parser.add_subparsers())
    ns = parser.parse_args(["export", *args])
    return ns.run(ns)


def test_cli_errors():
    from tui.cli import CliError

    for args, said in (
        (["--prometheus", "nope", "x.log"], "give [ADDR:]PORT"),
        (["--prometheus", "9477", "-"], "stdin"),
        (["--prometheus", "9477", "metrics+ssh://gpu1/metrics"], "give the port"),
        (["--prometheus", "9477", "--segments", "0", "x.log"], "--segments"),
    ):
        with pytest.raises(CliError, match=re.escape(said)):
            run_cli(*args)
    with __import__("socket").socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        with pytest.raises(CliError, match="cannot listen"):
            run_cli(
                "--prometheus", f"127.0.0.1:{busy.getsockname()[1]}", "--quiet", str(SAMPLES / "ab_a.log")
            )
