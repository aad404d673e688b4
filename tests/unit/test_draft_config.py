"""The draft model's config.json, read next to a local log (issue: which layers the drafter reads)."""

from __future__ import annotations

import json

from tui.core.formats.draft_config import facts_from_json, read_local


def test_sglang_reads_the_nested_key_and_vllm_the_top_level_one():
    cfg = json.dumps(
        {
            "architectures": ["LlamaForCausalLMEagle3"],
            "num_hidden_layers": 1,
            "eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 23, 44]},
        }
    )
    sg = facts_from_json(cfg, "sglang", "/d/config.json")
    assert sg["aux_layer_ids"] == [1, 23, 44] and sg["architecture"] == "LlamaForCausalLMEagle3"
    vl = facts_from_json(cfg, "vllm", "/d/config.json")
    assert vl["aux_layer_ids"] is None and "the other server reads" in vl["note"]
    top = facts_from_json(json.dumps({"eagle_aux_hidden_state_layer_ids": [2, 16, 29]}), "sglang", "p")
    assert top["aux_layer_ids"] is None and "default layers" in top["note"]


def test_missing_bad_and_hub_ids_are_notes(tmp_path):
    assert read_local(str(tmp_path / "nope"), "sglang")["note"] == "config.json not found"
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text("{not json")
    assert "not valid JSON" in read_local(str(tmp_path / "bad"), "sglang")["note"]
    assert "hub id" in read_local("meta-llama/Llama-3.2-1B", "vllm")["note"]
