"""``specwatch fleet`` against a Prometheus started a moment ago (1 s scrapes, started in the test)
scraping fakes of known truth, as an SRE points it at a new deployment: after about 10 s of
history every counter instance has its accept len with an interval that holds its truth and none
reads idle (the queries follow the history Prometheus has, not a 30 min window of 30 s steps);
the canary verdict between two label selectors is found with n, its interval and the window; a
restarted fake is a reset; a stopped fake is stale and down; a target down from the start is
listed as down; names longer than 40 characters stay distinct in ``--table``."""

from __future__ import annotations

import json
import threading

import pytest
from _cli_util import run_cli
from _prom_util import FakeLlamacpp, FakeSglang, FakeVllm, PromServer
from _prometheus_util import running_prometheus
from _ssh_util import free_port
from _wait import wait_until

# accepted tokens per step, alternating around the truth: 10 drafts a step, k = 3
VLLM_TRUTH = {"canary": (2.6, (15, 17)), "stable": (2.2, (11, 13))}
LLAMA_PATTERN = [2, 2, 2, 2, 3, 2, 2, 2, 2, 2]  # 2.1 accepted a draft: accept len 3.1
LONG = "inference-prod-us-east1-cluster-a-vllm-decode-server-"


def per_pos(accepted: int, drafts: int = 10) -> list[int]:
    p0 = min(drafts, accepted)
    p1 = min(p0, accepted - p0)
    return [p0, p1, accepted - p0 - p1]


class Traffic:
    """Steps every fake every 0.2 s from a thread (as servers serve), until stopped."""

    def __init__(self, vllm: dict[str, FakeVllm], llama: list[FakeLlamacpp]) -> None:
        self.vllm, self.llama = vllm, llama
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.k = 0

    def run(self) -> None:
        while not self.stop.wait(0.2):
            self.k += 1
            for name, fake in self.vllm.items():
                _, pattern = VLLM_TRUTH["canary" if "canary" in name else "stable"]
                fake.step(0, 10, per_pos(pattern[self.k % 2]))
            for fake in self.llama:
                fake.request([(3, a) for a in LLAMA_PATTERN])


def fleet_json(url: str, *args: str) -> dict:
    r = run_cli("fleet", url, "--json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_fresh_prometheus_gives_every_instance_its_value_and_the_canary_its_verdict(tmp_path):
    vllm = {f"vllm-{g}-{i}": FakeVllm(engines=1) for g in ("canary", "stable") for i in range(3)}
    llama = [FakeLlamacpp(), FakeLlamacpp()]
    sg = FakeSglang(dp=1)
    sg.decode(0, 2.4, 0.47, 300.0)
    servers = {name: PromServer(f.text).start() for name, f in vllm.items()}
    servers |= {f"llama-{i}": PromServer(f.text).start() for i, f in enumerate(llama)}
    servers["sglang"] = PromServer(sg.text).start()
    jobs = []
    for name, s in servers.items():
        labels = {"group": "canary" if "canary" in name else "stable"}
        jobs.append((name, f"127.0.0.1:{s.port}", labels, s.path))
    jobs.append(("never-up", f"127.0.0.1:{free_port()}", {}, "/metrics"))  # down from the start
    traffic = Traffic(vllm, llama)
    traffic.thread.start()
    try:
        with running_prometheus(tmp_path, jobs) as prom:
            # about 10 s of history on every target (the fixture's Prometheus is seconds old)
            def history() -> bool:
                n = prom.value("min(count_over_time(vllm:spec_decode_num_drafts_total[1m]))")
                m = prom.value("min(count_over_time(llamacpp:spec_decode_num_drafts_total[1m]))")
                return n is not None and m is not None and n >= 11 and m >= 11

            wait_until(history, what="10 s of history", show=prom.tail, step=0.5)
            doc = fleet_json(prom.url)  # the default window: 30 min, of which ~10 s exist
            assert doc["window_s"] == 1800 and doc["span_s"] < 120 and doc["step_s"] <= 2
            assert doc["scrape_interval_s"] == pytest.approx(1.0, abs=0.1)
            rows = {r["labels"]["job"]: r for r in doc["instances"]}
            for name in vllm:
                r = rows[name]
                truth = VLLM_TRUTH["canary" if "canary" in name else "stable"][0]
                assert r["accept_len"] is not None and not any("idle" in f for f in r["flags"]), r
                lo, hi = r["ci95"]
                assert lo <= truth <= hi and hi <= 4.0, (name, r["accept_len"], r["ci95"])
            for i in range(2):
                r = rows[f"llama-{i}"]
                assert r["accept_len"] == pytest.approx(3.1, abs=1e-9), r
                assert not any("idle" in f for f in r["flags"])
            assert rows["sglang"]["accept_len"] == pytest.approx(2.4)
            down = rows["never-up"]
            assert down["kind"] == "down" and any("down for the whole window" in f for f in down["flags"])
            # the canary: these servers over this window, with summary's pooled estimator and its
            # rule (30 steps a side): on 10 s of history, insufficient with the reason
            sel = ('group="stable", job=~"vllm.*"', 'group="canary", job=~"vllm.*"')
            cmp = fleet_json(prom.url, "--compare", *sel)["comparison"]
            assert cmp["question"] == "these servers over this window"
            assert cmp["verdict"] == "insufficient" and "need at least 30 records" in cmp["reason"], cmp
            wait_until(
                lambda: (
                    (prom.value("min(count_over_time(vllm:spec_decode_num_drafts_total[5m]))") or 0) >= 34
                ),
                what="34 s of history",
                step=0.5,
            )
            cmp = fleet_json(prom.url, "--compare", *sel)["comparison"]
            assert cmp["verdict"] == "higher", cmp
            assert cmp["diff"] == pytest.approx(0.4, abs=0.01)
            assert cmp["a"]["units"] == 3 and cmp["b"]["units"] == 3 and cmp["a"]["steps"] >= 30
            assert cmp["window"]["span_s"] < 120 and cmp["population"]["question"].startswith("servers drawn")
            table = run_cli("fleet", prom.url, "--table", "--compare", 'group="stable"', 'group="canary"')
            assert table.returncode == 0, table.stderr
            assert "these servers over this window" in table.stdout and "steps" in table.stdout

            # a restart is a reset; a stopped server is stale and down
            vllm["vllm-canary-0"].restart()
            servers["llama-1"].mode = 503
            servers["llama-1"].stop()
            wait_until(lambda: prom.value('up{job="llama-1"}') == 0.0, what="llama-1 down", step=0.2)

            def after() -> dict | None:
                d = fleet_json(prom.url)
                rs = {r["labels"]["job"]: r for r in d["instances"]}
                ok = "restart" in rs["vllm-canary-0"]["flags"] and any(
                    f.startswith("stale") for f in rs["llama-1"]["flags"]
                )
                return d if ok else None

            d = wait_until(after, what="the restart and the stopped server seen", step=0.5)
            rs = {r["labels"]["job"]: r for r in d["instances"]}
            assert any(f.startswith("down for") for f in rs["llama-1"]["flags"]), rs["llama-1"]
            assert rs["vllm-canary-0"]["resets"] == 1
    finally:
        traffic.stop.set()
        traffic.thread.join(timeout=5)
        for s in servers.values():
            s.stop()


def test_long_names_stay_distinct_in_the_table(tmp_path):
    fakes = [FakeVllm(engines=1) for _ in range(3)]
    servers = [PromServer(f.text).start() for f in fakes]
    # the instance label set in the scrape config (Prometheus keeps it instead of the address)
    jobs = [
        (f"long{i}", f"127.0.0.1:{s.port}", {"instance": f"{LONG}{i}:8000"}, s.path)
        for i, s in enumerate(servers)
    ]
    try:
        with running_prometheus(tmp_path, jobs) as prom:
            for f in fakes:
                f.step(0, 10, per_pos(15))
            wait_until(
                lambda: prom.value("count(vllm:spec_decode_num_drafts_total > 0)") == 3,
                what="3 series",
                step=0.2,
            )
            for f in fakes:
                f.step(0, 10, per_pos(15))
            seen: list = []

            def three_rows() -> bool:  # each target is scraped on its own beat: poll for all three
                r = run_cli("fleet", prom.url, "--table")
                assert r.returncode == 0, r.stderr
                seen[:] = [r.stdout, [ln for ln in r.stdout.splitlines() if ln.startswith("vllm ")]]
                return len(seen[1]) == 3

            wait_until(three_rows, what="3 rows in the table", step=0.5)
            assert len({ln.split()[1] for ln in seen[1]}) == 3, seen[0]
    finally:
        for s in servers:
            s.stop()


def test_nan_samples_for_a_few_scrapes_leave_the_value_within_its_interval(tmp_path):
    """The accepted-tokens counter of one fake reads NaN for 3 s of 1 s scrapes while its traffic
    goes on (the issue's 30 s of NaN, shortened: what matters is that a NaN step is left out of
    both counters, so the increments around it span the same samples): its value stays within
    its interval of the truth, the NaN samples are said, and its neighbour is untouched."""
    import re

    fakes = {"vllm-nan": FakeVllm(engines=1), "vllm-ok": FakeVllm(engines=1)}
    nan = threading.Event()

    def body(name: str):
        def text() -> str:
            t = fakes[name].text()
            if name == "vllm-nan" and nan.is_set():
                t = re.sub(
                    r"^(vllm:spec_decode_num_accepted_tokens_total\{[^}]*\}) \S+$", r"\1 NaN", t, flags=re.M
                )
            return t

        return text

    servers = {name: PromServer(body(name)).start() for name in fakes}
    jobs = [(name, f"127.0.0.1:{s.port}", {"group": "stable"}, s.path) for name, s in servers.items()]
    traffic = Traffic({f"{n}-canary": f for n, f in fakes.items()}, [])
    traffic.thread.start()
    try:
        with running_prometheus(tmp_path, jobs) as prom:
            wait_until(
                lambda: (prom.value("min(count_over_time(vllm:spec_decode_num_drafts_total[1m]))") or 0) >= 6,
                what="6 s of history",
                step=0.5,
            )
            nan.set()
            wait_until(
                lambda: (
                    len(
                        [
                            v
                            for s in prom.query(
                                'vllm:spec_decode_num_accepted_tokens_total{job="vllm-nan"}[10s]'
                            )
                            for _, v in s["values"]
                            if v == "NaN"
                        ]
                    )
                    >= 3
                ),
                what="3 NaN samples scraped",
                step=0.3,
            )
            nan.clear()
            wait_until(
                lambda: (
                    (prom.value("min(count_over_time(vllm:spec_decode_num_drafts_total[1m]))") or 0) >= 14
                ),
                what="more history after the NaN",
                step=0.5,
            )
            doc = fleet_json(prom.url)
            rows = {r["labels"]["job"]: r for r in doc["instances"]}
            bad, ok = rows["vllm-nan"], rows["vllm-ok"]
            assert bad["nonfinite_refused"] >= 3 and any("NaN samples refused" in f for f in bad["flags"])
            for r in (bad, ok):
                lo, hi = r["ci95"]
                assert lo <= 2.6 <= hi and abs(r["accept_len"] - 2.6) < 0.05, r
            assert ok["nonfinite_refused"] == 0
    finally:
        traffic.stop.set()
        traffic.thread.join(timeout=5)
        for s in servers.values():
            s.stop()
