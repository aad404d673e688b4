"""The rules ``specwatch rules`` writes, loaded into a real Prometheus (1 s scrapes and
evaluations), record what ``specwatch fleet --json`` prints for the same window: each instance's
pooled accept len, and each group's. The fakes' counters start at zero and stop moving before the
comparison, so Prometheus's extrapolation of ``rate`` is the same for both counters of a ratio and
the two must agree to float precision per instance (a group sums instances whose extrapolation
differs a little: within 0.005)."""

from __future__ import annotations

import json
import random
import threading
import time

import pytest
from _cli_util import run_cli
from _prom_util import FakeVllm, PromServer
from _prometheus_util import running_prometheus
from _wait import wait_until

from tui.core.fleet.promrules import GROUP_AL, INSTANCE_AL, rules_file


def test_recorded_rules_equal_fleet_json(tmp_path):
    fakes = {f"vllm-{g}-{i}": FakeVllm(engines=1) for g in ("canary", "stable") for i in range(2)}
    truth = {"canary": 2.6, "stable": 2.2}
    servers = {name: PromServer(f.text).start() for name, f in fakes.items()}
    jobs = [
        (name, f"127.0.0.1:{s.port}", {"group": name.split("-")[1]}, s.path) for name, s in servers.items()
    ]
    stop = threading.Event()
    rng = random.Random(6)

    def traffic() -> None:
        while not stop.wait(0.2):
            for name, f in fakes.items():
                d = rng.randint(5, 15)
                acc = max(0, min(3 * d, round((truth[name.split("-")[1]] - 1) * d + rng.gauss(0, 2))))
                p0 = min(d, acc)
                p1 = min(p0, acc - p0)
                f.step(0, d, [p0, p1, acc - p0 - p1])

    thread = threading.Thread(target=traffic, daemon=True)
    try:
        with running_prometheus(tmp_path, jobs, rules=rules_file([])) as prom:
            wait_until(lambda: prom.value("count(up == 1)") == 4, what="every target up", step=0.2)
            wait_until(
                lambda: prom.value("count(vllm:spec_decode_num_drafts_total == 0)") == 4,
                what="a first sample at zero",
                step=0.2,
            )
            thread.start()
            wait_until(
                lambda: (
                    (prom.value("min(count_over_time(vllm:spec_decode_num_drafts_total[1m]))") or 0) >= 10
                ),
                what="10 s of history",
                step=0.5,
            )
            stop.set()
            thread.join(timeout=5)
            stopped = time.time()
            # every target scraped after the last step, and the rules evaluated after that
            wait_until(
                lambda: (prom.value(f"min(timestamp({INSTANCE_AL}))") or 0) > stopped + 3,
                what="the rules evaluated on the final counts",
                step=0.5,
                show=prom.tail,
            )
            r = run_cli("fleet", prom.url, "--json", "--window", "5m", "--by", "group")
            assert r.returncode == 0, r.stderr
            doc = json.loads(r.stdout)
            recorded = {s["metric"]["job"]: float(s["value"][1]) for s in prom.query(INSTANCE_AL)}
            rows = {i["labels"]["job"]: i for i in doc["instances"]}
            assert set(recorded) == set(fakes) == set(rows)
            for job, value in recorded.items():
                assert rows[job]["accept_len"] == pytest.approx(value, rel=1e-9), job
                assert rows[job]["accept_len"] == pytest.approx(truth[job.split("-")[1]], abs=0.3)
            groups = {s["metric"]["group"]: float(s["value"][1]) for s in prom.query(GROUP_AL)}
            fleet_groups = {g["group"]: g["accept_len"] for g in doc["groups"]}
            for g, value in groups.items():
                assert fleet_groups[f"group={g}"] == pytest.approx(value, abs=0.005), g
    finally:
        stop.set()
        for s in servers.values():
            s.stop()
