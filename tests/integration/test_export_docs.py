"""docs/prometheus.yml and docs/grafana-dashboard.json load, and every series and label the dashboard
queries is one the exporter serves."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.resolve().parents[1]
DOCS = ROOT / "docs"


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
