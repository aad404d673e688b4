"""``specwatch rules`` output passes ``promtool check rules``, and ``promtool test rules`` unit tests
of its recording and alerting rules pass: the per-instance and per-group pooled accept len, the
project's ``accept_len<2.0 for 5m``, and the stuck and below-group alerts (CI=true: promtool must
be there)."""

from __future__ import annotations

import json
import subprocess

from _cli_util import run_cli
from _prometheus_util import promtool_binary

SERIES = {  # instance -> (group, accepted per minute, drafts per minute)
    "a:1": ("canary", 30, 40),  # accept len 1.75
    "c:1": ("canary", 2, 40),  # 1.05: stuck, and far below its group
    "b:1": ("stable", 100, 40),  # 3.5
    "d:1": ("stable", 100, 40),  # 3.5, with a NaN accepted-tokens sample at 10m (NAN_AT)
}
NAN_AT = "d:1"
RULE = "accept_len<2.0 for 5m"


def labels(inst: str, **more: str) -> dict[str, str]:
    return {"instance": inst, "job": "vllm", "engine": "0", "group": SERIES[inst][0], **more}


def promtool_test() -> dict:
    inputs = []
    for inst, (group, acc, drafts) in SERIES.items():
        sel = f'instance="{inst}", job="vllm", engine="0", group="{group}"'
        values = f"0+{acc}x60" if inst != NAN_AT else f"0+{acc}x9 NaN {11 * acc}+{acc}x50"
        inputs.append({"series": f"vllm:spec_decode_num_accepted_tokens_total{{{sel}}}", "values": values})
        inputs.append({"series": f"vllm:spec_decode_num_drafts_total{{{sel}}}", "values": f"0+{drafts}x60"})

    def fired(name: str, inst: str, value: str, **extra: str) -> dict:
        lab = labels(inst, family="vllm", **extra)
        ann = {
            "SpecDecodeAcceptLen1": {
                "summary": f"accept len < 2 on {inst} (vllm)",
                "description": f"specwatch rule '{RULE}': the pooled accept len over 5m is {value}",
            },
            "SpecDecodeStuckNearOne": {
                "summary": f"drafts almost never accepted on {inst}",
                "description": f"accept len {value} for 10 minutes: a wrong draft model, wrong hidden-state "
                "layers or a tokenizer mismatch?",
            },
            "SpecDecodeBelowGroup": {
                "summary": f"{inst} accepts >10% less than its group",
                "description": "a fixed 10% margin, not specwatch's verdict (PromQL has no interval): "
                "check with specwatch fleet",
            },
        }[name]
        return {"exp_labels": lab, "exp_annotations": ann}

    canary_group = 1 + (30 + 2) / (40 + 40)
    return {
        "rule_files": ["rules.yml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": inputs,
                "promql_expr_test": [
                    {
                        "expr": f'instance:specwatch_accept_len:ratio_rate5m{{instance="{i}"}}',
                        "eval_time": "10m",
                        "exp_samples": [
                            {
                                "labels": "instance:specwatch_accept_len:ratio_rate5m"
                                + "{"
                                + ", ".join(f'{k}="{v}"' for k, v in labels(i, family="vllm").items())
                                + "}",
                                "value": 1 + acc / drafts,
                            }
                        ],
                    }
                    for i, (_, acc, drafts) in SERIES.items()
                ]
                + [
                    {  # the NaN sample lies in the window: the stable group stays a number (3.5)
                        "expr": 'group:specwatch_accept_len:ratio_rate5m{group="stable"}',
                        "eval_time": "10m",
                        "exp_samples": [
                            {
                                "labels": 'group:specwatch_accept_len:ratio_rate5m{group="stable", family="vllm"}',
                                "value": 3.5,
                            }
                        ],
                    },
                    {
                        "expr": 'group:specwatch_accept_len:ratio_rate5m{group="canary"}',
                        "eval_time": "10m",
                        "exp_samples": [
                            {
                                "labels": 'group:specwatch_accept_len:ratio_rate5m{group="canary", family="vllm"}',
                                "value": canary_group,
                            }
                        ],
                    },
                ],
                "alert_rule_test": [
                    {"eval_time": "3m", "alertname": "SpecDecodeAcceptLen1", "exp_alerts": []},
                    {
                        "eval_time": "20m",
                        "alertname": "SpecDecodeAcceptLen1",
                        "exp_alerts": [
                            fired(
                                "SpecDecodeAcceptLen1", "a:1", "1.75", severity="warning", specwatch_rule=RULE
                            ),
                            fired(
                                "SpecDecodeAcceptLen1", "c:1", "1.05", severity="warning", specwatch_rule=RULE
                            ),
                        ],
                    },
                    {"eval_time": "8m", "alertname": "SpecDecodeStuckNearOne", "exp_alerts": []},
                    {
                        "eval_time": "20m",
                        "alertname": "SpecDecodeStuckNearOne",
                        "exp_alerts": [fired("SpecDecodeStuckNearOne", "c:1", "1.05", severity="warning")],
                    },
                    {
                        "eval_time": "25m",
                        "alertname": "SpecDecodeBelowGroup",
                        "exp_alerts": [fired("SpecDecodeBelowGroup", "c:1", "", severity="info")],
                    },
                ],
            }
        ],
    }


def test_rules_pass_promtool_check_and_its_unit_tests(tmp_path):
    promtool = promtool_binary()
    r = run_cli("rules", "--alert", RULE, "--alert", "drift", "--alert", "verdict=lower")
    assert r.returncode == 0, r.stderr
    assert "# not written: drift: needs specwatch's statistics" in r.stdout
    assert "# not written: verdict=lower" in r.stdout
    (tmp_path / "rules.yml").write_text(r.stdout)
    check = subprocess.run(
        [promtool, "check", "rules", "rules.yml"], cwd=tmp_path, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "SUCCESS" in check.stdout
    (tmp_path / "test.yml").write_text(json.dumps(promtool_test(), indent=1))
    test = subprocess.run(
        [promtool, "test", "rules", "test.yml"], cwd=tmp_path, capture_output=True, text=True
    )
    assert test.returncode == 0, test.stdout + test.stderr
