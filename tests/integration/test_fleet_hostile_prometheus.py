"""``specwatch fleet`` against a hostile but real Prometheus: served under a path prefix
(``--web.route-prefix``) behind basic auth (its web config, bcrypt), the password read from
``[fleet]`` of specwatch.toml (a file it names) and never printed; an instance label with quotes,
backslashes, ``|`` and an escape sequence read back exactly, shown inert, and selected exactly by
the instance's history source (the Enter of the screen); a wrong password is one line."""

from __future__ import annotations

import json

from _cli_util import run_cli
from _prom_util import FakeVllm, PromServer
from _prometheus_util import history_of, running_prometheus
from _wait import wait_until

from tui.core.sources.prom.api import PromAuth

PASSWORD = "pa55-\x1b[31m-word"
HOSTILE = 'gpu|"07"\\node\x1b[2J:8000'


def test_prefix_basic_auth_and_hostile_labels(tmp_path):
    fake = FakeVllm(engines=1)
    srv = PromServer(fake.text).start()
    jobs = [("vllm", f"127.0.0.1:{srv.port}", {"instance": HOSTILE, "draft": "a|b"}, srv.path)]
    (tmp_path / "pw").write_text("pa55-word\n")
    try:
        with running_prometheus(tmp_path, jobs, prefix="/prom", basic=("sre", "pa55-word")) as prom:
            wait_until(
                lambda: prom.value("count(up == 1)") == 1, what="the target up", step=0.2, show=prom.tail
            )
            for _ in range(4):
                fake.step(0, 10, [10, 6, 0])
                want = prom.value("sum(vllm:spec_decode_num_drafts_total)")
                wait_until(
                    lambda w=want: (
                        (prom.value("sum(vllm:spec_decode_num_drafts_total)") or 0) >= (w or 0) + 10
                    ),
                    what="a scraped step",
                    step=0.1,
                )
            cfg = tmp_path / "specwatch.toml"
            cfg.write_text(f'[fleet]\nusername = "sre"\npassword_file = "{tmp_path / "pw"}"\n')
            r = run_cli("fleet", prom.url, "--json", "--config", str(cfg))
            assert r.returncode == 0, r.stderr
            assert "pa55" not in r.stdout + r.stderr
            doc = json.loads(r.stdout)
            (row,) = doc["instances"]
            assert row["labels"]["instance"] == HOSTILE and row["labels"]["draft"] == "a|b"
            assert row["accept_len"] == 2.6
            table = run_cli("fleet", prom.url, "--table", "--config", str(cfg))
            assert table.returncode == 0 and "\x1b" not in table.stdout and "gpu|" in table.stdout
            # the instance's own series (the screen's Enter), selected by its exact hostile labels
            drv = history_of(
                prom.url,
                {"instance": HOSTILE, "job": "vllm", "engine": "0"},
                PromAuth(username="sre", password="pa55-word"),
            )
            pooled = drv.stats.total.pooled_len
            assert pooled.denominator >= 10 and pooled.denominator % 10 == 0
            assert 1 + pooled.numerator / pooled.denominator == 2.6
            # a wrong password: one line, no secret
            (tmp_path / "pw").write_text(PASSWORD)
            bad = run_cli("fleet", prom.url, "--json", "--config", str(cfg))
            assert bad.returncode == 1 and bad.stderr.count("\n") == 1
            assert "authentication failed (HTTP 401)" in bad.stderr and "pa55" not in bad.stderr
    finally:
        srv.stop()
