"""The Grafana dashboard in docs/ queries only series the exporter serves."""

from __future__ import annotations

import json
import re

from _cli_util import ROOT
from _export_util import served

DOCS = ROOT / "docs"

SERIES = re.compile(r"(?<![:\w])(specwatch_[a-z0-9_]+)\s*(\{[^}]*\})?")
RECORDED = re.compile(r"\b((?:instance|group):specwatch_[a-z0-9_]+:[a-z0-9_]+)")


MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)")


def rules_json() -> str:
    """The JSON part of docs/specwatch.rules.yml (after its comment lines)."""
    text = (DOCS / "specwatch.rules.yml").read_text()
    return "\n".join(line for line in text.splitlines() if not line.startswith("#"))


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
    recorded = {r["record"] for g in json.loads(rules_json())["groups"] for r in g["rules"] if "record" in r}
    for q in queries:
        rules_used = RECORDED.findall(q)
        assert set(rules_used) <= recorded, (q, recorded)
        found = SERIES.findall(q)
        assert found or rules_used, q
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


def test_the_shipped_rules_file_is_what_specwatch_rules_prints():
    from tui.core.fleet.promrules import rules_file

    assert (DOCS / "specwatch.rules.yml").read_text() == rules_file([])
