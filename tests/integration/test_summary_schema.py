"""``summary --json`` follows its versioned JSON Schema (``summary --json-schema``, made from the
typed result tui/core/model/summary.py): the JSON of every sample, real and format log, of two
logs compared, and of a time window validates against it, with jsonschema (the schema text as a
third party reads it) and with pydantic (the model itself)."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest
from pydantic import TypeAdapter, ValidationError

from tests._cli_util import run_cli, summary_json
from tests._hostile_util import write_hostile
from tests._prom_util import busy_vllm
from tests._refused_util import generated_log
from tests._summary_snapshot import snapshot_files
from tui.core.model.summary import SCHEMA, Summary


@pytest.fixture(scope="module")
def schema() -> dict:
    out = run_cli("summary", "--json-schema")
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)
    jsonschema.Draft202012Validator.check_schema(s)
    return s


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> list[dict]:
    tmp = tmp_path_factory.mktemp("schema")
    refused = tmp / "refused.log"
    refused.write_text("".join(generated_log(3)[0]))
    _, server = busy_vllm()
    try:
        metrics = summary_json("--duration", "0.2", "--scrape-interval", "0.1", f"gpu=metrics+{server.url}")
    finally:
        server.stop()
    return [
        summary_json("--allow-empty", *snapshot_files()),
        summary_json("sample_logs/ab_a.log", "sample_logs/ab_b.log"),  # B − A
        summary_json("--since", "2026-11-20 10:01", "sample_logs/sglang_dp_attention.log"),  # a window
        summary_json(str(refused), str(write_hostile(tmp / "hostile.log"))),  # refused values, controls
        metrics,  # a metrics source: its scrapes and lifetime totals
    ]


def test_the_schema_says_its_version(schema: dict) -> None:
    assert schema["$schema"].endswith("2020-12/schema")
    assert schema["properties"]["schema"] == {"const": SCHEMA, "description": "the version of this schema"}
    assert str(SCHEMA) in schema["$id"]
    assert set(schema["required"]) >= {"schema", "sources", "comparison"}


def test_every_output_validates_against_the_schema(schema: dict, outputs: list[dict]) -> None:
    validator = jsonschema.Draft202012Validator(schema)
    adapter = TypeAdapter(Summary)
    assert outputs[1]["comparison"] is not None and outputs[2]["sources"][0]["window"] is not None
    assert outputs[3]["sources"][0]["refused"]["example"] is not None
    assert outputs[4]["sources"][0]["metrics"]["lifetime"]
    for out in outputs:
        assert out["schema"] == SCHEMA
        errors = sorted(validator.iter_errors(out), key=lambda e: list(e.absolute_path))
        assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
        adapter.validate_python(out)
    assert len(outputs[0]["sources"]) == len(snapshot_files())


def test_the_schema_refuses_what_the_model_does_not_say(schema: dict, outputs: list[dict]) -> None:
    """The schema is closed (no key it does not name) and typed: it can fail."""
    validator = jsonschema.Draft202012Validator(schema)
    base = outputs[1]
    spoilt = []
    extra = copy.deepcopy(base)
    extra["sources"][0]["segments"][0]["surprise"] = 1
    spoilt.append(extra)
    wrong = copy.deepcopy(base)
    wrong["sources"][0]["accept_len"]["n"] = "many"
    spoilt.append(wrong)
    missing = copy.deepcopy(base)
    del missing["comparison"]["accept_len"]["verdict"]
    spoilt.append(missing)
    version = copy.deepcopy(base)
    version["schema"] = SCHEMA + 1
    spoilt.append(version)
    for bad in spoilt:
        assert not validator.is_valid(bad)
    for bad in spoilt[:3]:
        with pytest.raises(ValidationError):
            TypeAdapter(Summary).validate_python(bad)
