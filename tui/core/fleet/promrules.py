"""``specwatch rules``: a Prometheus rules file with the fleet's numbers as recording rules and the
project's alert language as alerting rules, so that acceptance alerts fire where a team's other
alerts fire.

Recording rules (every family the project reads; label ``family``):

* ``instance:specwatch_accepted_tokens:rate5m`` / ``instance:specwatch_drafts:rate5m`` — the
  counters' rates per serving instance (counter families);
* ``instance:specwatch_accept_len:ratio_rate5m`` — 1 + accepted / drafts per instance (counter
  families: pooled, exact up to Prometheus's extrapolation, which is the same for both counters of
  one scrape); for SGLang (a gauge only) ``avg_over_time`` of its gauge over 5 minutes, values
  below 1 (no decode yet) left out; for specwatch's exporter its current segment's window mean;
* ``group:specwatch_accept_len:ratio_rate5m`` — the same pooled over each value of the grouping
  label (default ``group``), counters families only (a gauge has no counts to pool).

A NaN (or Inf) sample of a counter is left out of its rate (:func:`finite_rate`) instead of
making the instance, its group and the alerts on them NaN while it lies in the window.

Alerting rules: ``accept_len<2.0 for 5m`` becomes ``instance:specwatch_accept_len:ratio_rate5m``
over a window of the rule's duration (``rate(x[5m])``, the pooled value of the last 5 minutes, as
the app's rolling mean of its window) compared with the threshold. The app's hysteresis (``clear=``)
becomes ``keep_firing_for`` only approximately and is left out; ``drift`` and ``verdict=`` rules
need the app's statistics and are written as comments saying so. ``stuck`` (accept len below 1.1
for 10 minutes while drafting) and ``below-group`` (an instance more than 10% below its group's
pooled value for 15 minutes) are added unless ``--no-defaults``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from tui.core.alerts.rules import Rule, parse_rule
from tui.core.fleet.fetch import fleet_families
from tui.core.fleet.query import BASE_LABELS
from tui.core.formats.fleet_names import FleetNames

INSTANCE_AL = "instance:specwatch_accept_len:ratio_rate5m"
GROUP_AL = "group:specwatch_accept_len:ratio_rate5m"
ACC, DRAFTS = "instance:specwatch_accepted_tokens:rate5m", "instance:specwatch_drafts:rate5m"


@dataclass(frozen=True)
class RulesConfig:
    group_label: str = "group"
    window: str = "5m"
    defaults: bool = True


def _by(names: FleetNames, group: str) -> str:
    labels = [*BASE_LABELS, *names.instance_labels]
    return ", ".join(labels if group in labels else [*labels, group])


def _family(expr: str, family: str) -> str:
    return f'label_replace({expr}, "family", "{family}", "", "")'


def finite_rate(selector: str, window: str) -> str:
    """``rate(x[window])``, and where a NaN (or Inf) sample makes it NaN, the rate of the finite
    samples only (a subquery of ``x`` without them, at the evaluation interval): a NaN sample no
    longer makes an instance, its group's sum and every pending alert on them NaN for as long as
    it lies in the window. Both counters of a ratio get the same treatment."""
    return f"(rate({selector}[{window}]) >= 0 < +Inf or rate(({selector} >= 0 < +Inf)[{window}:]))"


def _rate_ratio(names: FleetNames, window: str, group: str) -> str:
    assert names.accepted is not None and names.drafts is not None
    by = _by(names, group)
    acc = f"sum by ({by}) ({finite_rate(names.accepted.selector(), window)})"
    dr = f"sum by ({by}) ({finite_rate(names.drafts.selector(), window)})"
    return f"1 + {acc} / ({dr} > 0)"


def _gauge(names: FleetNames, window: str, group: str) -> str:
    assert names.accept_len is not None
    sel = names.accept_len.selector()
    return f"avg by ({_by(names, group)}) (avg_over_time(({sel} >= 1)[{window}:]))"


def recording_rules(cfg: RulesConfig) -> list[dict]:
    out: list[dict] = []
    g = cfg.group_label
    for names in fleet_families():
        if names.kind == "counters":
            assert names.accepted is not None and names.drafts is not None
            by = _by(names, g)
            for record, series in ((ACC, names.accepted), (DRAFTS, names.drafts)):
                expr = f"sum by ({by}) ({finite_rate(series.selector(), '5m')})"
                out.append({"record": record, "expr": expr, "labels": {"family": names.family}})
            expr = _rate_ratio(names, "5m", g)
            out.append({"record": INSTANCE_AL, "expr": expr, "labels": {"family": names.family}})
        else:
            expr = _gauge(names, "5m", g)
            out.append({"record": INSTANCE_AL, "expr": expr, "labels": {"family": names.family}})
    out.append(
        {
            "record": GROUP_AL,
            "expr": f"1 + sum by ({g}, family) ({ACC}) / (sum by ({g}, family) ({DRAFTS}) > 0)",
        }
    )
    return out


def _window_expr(window: str, group: str) -> str:
    """The instance accept len over ``window`` (counters: pooled; gauges: their mean), every family,
    only for instances watched for the whole window (a sample ``window`` ago), as the app checks a
    rule only once its window is full."""
    parts = []
    for names in fleet_families():
        by = _by(names, group)
        if names.kind == "counters":
            assert names.drafts is not None
            value, seen = _rate_ratio(names, window, group), names.drafts
        else:
            assert names.accept_len is not None
            value, seen = _gauge(names, window, group), names.accept_len
        watched = f"group by ({by}) ({seen.selector()} offset {window})"
        parts.append(_family(f"({value}) and on ({by}) {watched}", names.family))
    return " or ".join(f"({p})" for p in parts)


def _duration(seconds: float) -> str:
    if seconds % 3600 == 0:
        return f"{int(seconds // 3600)}h"
    if seconds % 60 == 0:
        return f"{int(seconds // 60)}m"
    return f"{int(round(seconds))}s"


def alert_rule(rule: Rule, index: int, group: str = "group") -> dict | str:
    """A Prometheus alerting rule for one of the project's rules, or a comment saying why not."""
    if rule.kind != "threshold":
        return f"{rule.text}: needs specwatch's statistics (not expressible in PromQL); run it in specwatch"
    if rule.metric != "accept_len":
        return f"{rule.text}: only accept_len is written as a Prometheus rule"
    window = _duration(rule.duration) if rule.duration else "1m"
    expr = f"({_window_expr(window, group)}) {rule.op} {rule.threshold!r}"
    name = f"SpecDecodeAcceptLen{index}"
    return {
        "alert": name,
        "expr": expr,
        "labels": {"severity": "warning", "specwatch_rule": rule.text},
        "annotations": {
            "summary": f"accept len {rule.op} {rule.threshold:g} on {{{{ $labels.instance }}}} ({{{{ $labels.family }}}})",
            "description": f"specwatch rule {rule.text!r}: the pooled accept len over {window} is "
            '{{ $value | printf "%.2f" }}',
        },
    }


def default_alerts(cfg: RulesConfig) -> list[dict]:
    g = cfg.group_label
    return [
        {
            "alert": "SpecDecodeStuckNearOne",
            "expr": f"{INSTANCE_AL} < 1.1",
            "for": "10m",
            "labels": {"severity": "warning"},
            "annotations": {
                "summary": "drafts almost never accepted on {{ $labels.instance }}",
                "description": 'accept len {{ $value | printf "%.2f" }} for 10 minutes: a wrong draft model, '
                "wrong hidden-state layers or a tokenizer mismatch?",
            },
        },
        {
            "alert": "SpecDecodeBelowGroup",
            "expr": f"{INSTANCE_AL} < on ({g}, family) group_left 0.9 * {GROUP_AL}",
            "for": "15m",
            "labels": {"severity": "info"},
            "annotations": {
                "summary": "{{ $labels.instance }} accepts >10% less than its group",
                "description": "a fixed 10% margin, not specwatch's verdict (PromQL has no interval): "
                "check with specwatch fleet",
            },
        },
    ]


def rules_file(rule_texts: list[str], cfg: RulesConfig | None = None) -> str:
    """The rules file (YAML; written as JSON-compatible YAML, which Prometheus reads)."""
    cfg = cfg or RulesConfig()
    alerts: list[dict] = []
    notes: list[str] = []
    for i, text in enumerate(rule_texts, 1):
        got = alert_rule(parse_rule(text), i, cfg.group_label)
        if isinstance(got, str):
            notes.append(got)
        else:
            alerts.append(got)
    if cfg.defaults:
        alerts += default_alerts(cfg)
    groups = [{"name": "specwatch-recording", "rules": recording_rules(cfg)}]
    if alerts:
        groups.append({"name": "specwatch-alerts", "rules": alerts})
    head = [
        "# Prometheus rules written by `specwatch rules` (docs/fleet.md).",
        "# Recording rules: pooled accept len per instance and per group, every family specwatch reads.",
    ]
    head += [f"# not written: {n}" for n in notes]
    return "\n".join(head) + "\n" + json.dumps({"groups": groups}, indent=2) + "\n"
