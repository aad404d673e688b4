"""``specwatch fleet --json`` against a real Prometheus (Debian's) on 127.0.0.1 scraping fake servers
that expose each family's real exposition (vLLM, SGLang, TensorRT-LLM, llama.cpp) and a real
``specwatch export``: each instance's pooled accept len equals the truth computed from what the
fakes served; a restarted fake shows its counter reset (and its counts on both sides of it); a
stopped one is stale; the queries do not grow with the number of instances."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest
from _cli_util import run_cli
from _prom_util import FakeLlamacpp, FakeSglang, FakeTrtllm, FakeVllm, PromServer
from _prometheus_util import running_prometheus
from _ssh_util import free_port
from _wait import wait_until

from tui.core.pipeline.whole import summarize_file

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def step_vllm(fake: FakeVllm, rng: random.Random, truth: dict) -> None:
    for e in range(fake.engines):
        drafts = rng.randint(5, 40)
        per_pos = [rng.randint(0, drafts)]
        for _ in range(fake.k - 1):
            per_pos.append(rng.randint(0, per_pos[-1]))
        fake.step(e, drafts, per_pos)
        t = truth.setdefault(e, [0, 0])
        t[0] += sum(per_pos)
        t[1] += drafts


def instance_history(url: str, family: str, labels: dict[str, str]):
    """One instance read whole (follow=False) by the source the fleet screen opens, into a driver."""
    import asyncio

    from tui.core.fleet.fetch import fleet_families
    from tui.core.pipeline.follow import Followed
    from tui.core.sources.base import LineBatch
    from tui.core.sources.prom.history import PromHistorySource

    names = next(n for n in fleet_families() if n.family == family)
    drv = Followed("one")

    async def run() -> None:
        src = PromHistorySource("one", url, names, labels, window=300, step=1, follow=False)
        async for b in src:
            drv.feed(b)
            if not isinstance(b, LineBatch):
                assert b.kind.value != "error", b.message
        await src.aclose()

    asyncio.run(run())
    return drv


def fleet_json(url: str, *args: str) -> dict:
    r = run_cli("fleet", url, "--json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def by_job(doc: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for inst in doc["instances"]:
        out.setdefault(inst["labels"]["job"], []).append(inst)
    return out


def test_fleet_reads_every_family_from_prometheus(tmp_path):
    rng = random.Random(3)
    va, vb = FakeVllm(engines=2), FakeVllm(engines=1, model="m2")
    sg = FakeSglang(dp=2)
    trt = FakeTrtllm(k=3)
    llama = FakeLlamacpp()
    sg.decode(0, 2.5, 0.5, 300.0)
    sg.decode(1, 3.0, 0.66, 320.0)
    servers = {
        "vllm-a": PromServer(va.text).start(),
        "vllm-b": PromServer(vb.text).start(),
        "sglang": PromServer(sg.text).start(),
        "trt": PromServer(trt.text, path="/prometheus/metrics").start(),
        "llama": PromServer(llama.text).start(),
    }
    log = ROOT / "sample_logs" / "ab_a.log"
    want_export = summarize_file(str(log), "ab_a.log", workers=1).stats.current.all.accept_len.window_mean
    export_port = free_port()
    exporter = subprocess.Popen(
        [sys.executable, "-m", "tui", "export", "--prometheus", str(export_port), "--quiet", str(log)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    labels = {
        "vllm-a": {"group": "stable", "draft": "v1"},
        "vllm-b": {"group": "canary", "draft": "v2"},
        "sglang": {"group": "stable"},
        "trt": {"group": "stable"},
        "llama": {"group": "canary"},
        "specwatch": {},
    }
    jobs = [(j, f"127.0.0.1:{s.port}", labels[j], s.path) for j, s in servers.items()]
    jobs.append(("specwatch", f"127.0.0.1:{export_port}", {}, "/metrics"))
    truth_a: dict = {}
    truth_b: dict = {}
    try:
        with running_prometheus(tmp_path, jobs) as prom:
            wait_until(
                lambda: prom.value("count(up == 1)") == 6, what="every target up", show=prom.tail, step=0.2
            )

            def scraped(promql: str, want: float):
                return lambda: prom.value(promql) == want

            for _ in range(3):  # a few scraped steps on every counter family
                step_vllm(va, rng, truth_a)
                step_vllm(vb, rng, truth_b)
                trt.iterate({1: 2, 2: 1})
                trt.finish(1)
                trt.finish(2)
                llama.request([(3, rng.randint(0, 3)) for _ in range(rng.randint(2, 9))])
                for promql, want in (
                    (
                        'sum(vllm:spec_decode_num_drafts_total{job="vllm-a"})',
                        sum(t[1] for t in truth_a.values()),
                    ),
                    (
                        'sum(vllm:spec_decode_num_drafts_total{job="vllm-b"})',
                        sum(t[1] for t in truth_b.values()),
                    ),
                    ('sum(trtllm_spec_decode_drafted_tokens_total{token_position="0"})', trt.fin_steps),
                    ("sum(llamacpp:spec_decode_num_drafts_total)", llama.drafts),
                ):
                    wait_until(scraped(promql, want), what=promql, show=prom.tail, step=0.1)
            # vllm-b restarts: its counters go back to zero and count again
            vb.restart()
            before = dict(truth_b)
            truth_b_after: dict = {}
            step_vllm(vb, rng, truth_b_after)
            wait_until(
                scraped(
                    'sum(vllm:spec_decode_num_drafts_total{job="vllm-b"})',
                    sum(t[1] for t in truth_b_after.values()),
                ),
                what="vllm-b after its restart",
                step=0.1,
            )
            for e, (a, d) in truth_b_after.items():
                before[e] = [before[e][0] + a, before[e][1] + d]
            # llama stops: stale
            servers["llama"].mode = 503  # its kept-alive connection answers no more metrics
            servers["llama"].stop()
            wait_until(scraped('up{job="llama"}', 0.0), what="llama down", step=0.1)

            def stale_seen():
                doc = fleet_json(prom.url, "--window", "5m", "--step", "1s")
                (row,) = by_job(doc).get("llama", [None])
                return doc if row and any(f.startswith("stale") for f in row["flags"]) else None

            doc = wait_until(stale_seen, what="the stopped llama.cpp server flagged stale", step=0.5)
            jobs_ = by_job(doc)
            # per family and quantity, not per instance (+ time(), up, and two probes of the history)
            assert doc["queries"] <= 24
            va_rows = {r["labels"]["engine"]: r for r in jobs_["vllm-a"]}
            for e, (acc, drafts) in truth_a.items():
                r = va_rows[str(e)]
                assert r["accept_len"] == pytest.approx(1 + acc / drafts, rel=1e-12)
                assert r["accepted"] == acc and r["drafts"] == drafts and r["resets"] == 0
                assert r["labels"]["group"] == "stable" and r["labels"]["draft"] == "v1"
                assert r["ci95"] is not None and r["ci95"][0] <= r["accept_len"] <= r["ci95"][1]
            (rb,) = jobs_["vllm-b"]
            acc, drafts = before[0]
            assert rb["accept_len"] == pytest.approx(1 + acc / drafts, rel=1e-12)
            assert rb["resets"] == 1 and "restart" in rb["flags"]
            sg_rows = {r["labels"]["dp_rank"]: r for r in jobs_["sglang"]}
            assert sg_rows["0"]["accept_len"] == pytest.approx(2.5) and sg_rows["1"][
                "accept_len"
            ] == pytest.approx(3.0)
            assert sg_rows["0"]["kind"] == "gauge"
            (rt,) = jobs_["trt"]
            assert rt["accept_len"] == pytest.approx(1 + trt.fin_acc / trt.fin_steps, rel=1e-12)
            (rl,) = jobs_["llama"]
            assert rl["accept_len"] == pytest.approx(1 + llama.acc / llama.drafts, rel=1e-12)
            assert not any(f.startswith("stale") for r in jobs_["vllm-a"] for f in r["flags"])
            # the history source the fleet screen opens for vllm-b: a restart opens a segment, and
            # the records' counts add up to the truth on both sides of it
            history = instance_history(
                prom.url,
                "vllm",
                {"instance": f"127.0.0.1:{servers['vllm-b'].port}", "job": "vllm-b", "engine": "0"},
            )
            assert len(history.stats.segments) == 2
            pooled = history.stats.total.pooled_len
            assert pooled.numerator == acc and pooled.denominator == drafts
            # specwatch export: a gauge of the log's current segment, constant once the log is read
            spec = fleet_json(prom.url, "--selector", 'job="specwatch"', "--window", "3s", "--step", "1s")
            (rs,) = spec["instances"]
            assert rs["family"] == "specwatch" and rs["accept_len"] == pytest.approx(want_export, rel=1e-12)
            # groups and the canary comparison (one stable vLLM server has 2 engines)
            cmp = fleet_json(
                prom.url, "--window", "5m", "--step", "1s", "--compare", 'job="vllm-a"', 'job="vllm-b"'
            )["comparison"]
            assert cmp["a"]["units"] == 2 and cmp["b"]["units"] == 1
            assert cmp["verdict"] == "insufficient" and "need at least 30 records" in cmp["reason"]
            pop = cmp["population"]  # servers drawn like these: one server on a side says nothing
            assert pop["verdict"] == "insufficient" and "need 2 instances" in pop["reason"]
            # a PromQL error and an empty answer: one line each
            r = run_cli("fleet", prom.url, "--json", "--selector", 'job=~"("')
            assert r.returncode == 1 and r.stdout == "" and r.stderr.count("\n") == 1
            assert "bad_data" in r.stderr and "Traceback" not in r.stderr
            r = run_cli("fleet", prom.url, "--table", "--selector", 'job="nothing"')
            assert r.returncode == 0 and "0 instances" in r.stdout
            assert r.stderr.count("\n") == 1 and "no spec-decode series found" in r.stderr
    finally:
        for s in servers.values():
            s.stop()
        exporter.terminate()
        exporter.wait(timeout=10)


def test_fleet_errors_are_one_line(tmp_path):
    port = free_port()
    r = run_cli("fleet", f"http://127.0.0.1:{port}", "--json")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "cannot connect" in r.stderr and "Traceback" not in r.stderr
    bad = PromServer(lambda: "<html>hi</html>", path="/api/v1/query").start()
    try:
        r = run_cli("fleet", f"http://127.0.0.1:{bad.port}")
        assert r.returncode == 1 and "not a Prometheus API answer" in r.stderr
        assert r.stderr.count("\n") == 1
    finally:
        bad.stop()
    for code, word in ((401, "authentication failed"), (403, "access denied")):
        srv = PromServer(lambda: "", mode=code, path="/api/v1/query").start()
        try:
            r = run_cli("fleet", f"http://127.0.0.1:{srv.port}")
            assert r.returncode == 1 and word in r.stderr and r.stderr.count("\n") == 1
        finally:
            srv.stop()
    r = run_cli("fleet", "http://127.0.0.1:1", "--selector", "{bad")
    assert r.returncode == 2 and "selector" in r.stderr
