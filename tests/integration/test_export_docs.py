"""docs/prometheus.yml and docs/grafana-dashboard.json load, and every series and label the dashboard
queries is one the exporter serves."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tui.core.export.metrics import Exported, SpecwatchCollector
from tui.core.pipeline.follow import Followed
from tui.core.sources.base import EventKind, LineBatch, SourceEvent

ROOT = Path(__file__).parent.resolve().parents[1]
DOCS = ROOT / "docs"
SERIES = re.compile(r"\b(specwatch_[a-z0-9_]+)\s*(\{[^}]*\})?")
MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)")


def served() -> dict[str, set[str]]:
    """Series name -> label names, as the exporter serves them for the sample logs."""
    exported = []
    for name in ("vllm_v1_eagle3.log", "sglang_dp_attention.log"):
        st = Followed(name, track_arrivals=True)
        st.feed(SourceEvent(name, EventKind.OPENED, "opened"))
        lines = (ROOT / "sample_logs" / name).read_text().splitlines()
        st.feed(LineBatch(name, lines, list(range(len(lines))), 1))
        exported.append(Exported(st, "box1", "file", name))
    reg = CollectorRegistry()
    reg.register(SpecwatchCollector(exported))
    out: dict[str, set[str]] = {}
    for fam in text_string_to_metric_families(generate_latest(reg).decode()):
        for s in fam.samples:
            out.setdefault(s.name, set()).update(s.labels)
    out["specwatch_exporter_info"] = {"version"}  # served by the CLI's registry (see test_export)
    return out


def dashboard_queries(dash: dict) -> list[str]:
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    exprs += [v["query"]["query"] for v in dash["templating"]["list"] if isinstance(v.get("query"), dict)]
    exprs += [a["expr"] for a in dash["annotations"]["list"] if "expr" in a]
    return exprs


def test_grafana_dashboard_queries_what_the_exporter_serves():
    dash = json.loads((DOCS / "grafana-dashboard.json").read_text())
    assert dash["title"] and dash["uid"] and dash["schemaVersion"] >= 30
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids))
    names = served()
    queries = dashboard_queries(dash)
    assert len(queries) >= 12
    seen = set()
    for q in queries:
        found = SERIES.findall(q)
        assert found, q
        for name, matchers in found:
            assert name in names, f"{name} (in {q!r}) is not served"
            seen.add(name)
            for label, _ in MATCHER.findall(matchers or ""):
                assert label in names[name], f"{name} has no label {label!r} (in {q!r})"
    assert {
        "specwatch_accept_len_window_mean",
        "specwatch_accept_rate_normalized_window_mean",
        "specwatch_accepted_tokens_total",
        "specwatch_source_state",
    } <= seen
    variables = {v["name"] for v in dash["templating"]["list"]}
    assert {"datasource", "host", "source", "model", "config"} <= variables
    for p in dash["panels"]:
        if p["type"] != "row":
            assert p["datasource"]["uid"] == "${datasource}" and p["targets"], p["title"]
        for var in re.findall(r"\$(\w+)", json.dumps(p.get("targets", []))):
            assert var in variables, (p["title"], var)


def test_prometheus_config_example():
    text = (DOCS / "prometheus.yml").read_text()
    try:
        import yaml
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but pyyaml is missing (the test extra should install it)")
        yaml = None
    if yaml is not None:
        cfg = yaml.safe_load(text)
        job = [j for j in cfg["scrape_configs"] if j["job_name"] == "specwatch"][0]
        assert job["metrics_path"] == "/metrics"
        targets = [t for sc in job["static_configs"] for t in sc["targets"]]
        assert targets and all(re.fullmatch(r"[\w.-]+:\d+", t) for t in targets)
    promtool = shutil.which("promtool")
    if promtool is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but promtool (Debian's prometheus package) is missing")
        pytest.skip("promtool is not installed (apt-get install prometheus)")
    r = subprocess.run(
        [promtool, "check", "config", str(DOCS / "prometheus.yml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stdout + r.stderr
