"""``specwatch summary`` shows the draft model's layers per segment (the CLI as a subprocess)."""

from __future__ import annotations

import json

from _cli_util import run_cli


def test_summary_shows_draft_layers_per_segment(tmp_path):
    good = tmp_path / "eagle3"
    good.mkdir()
    (good / "config.json").write_text(
        json.dumps({"eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 23, 44]}})
    )
    log = tmp_path / "x.log"
    log.write_text(
        f"[2026-06-01 00:00:00] server_args=ServerArgs(speculative_algorithm='EAGLE3', speculative_draft_model_path='{good}')\n"
        "[2026-06-01 00:01:00] Decode batch, #running-req: 1, accept len: 2.00, accept rate: 0.33\n"
        f"[2026-06-01 01:00:00] server_args=ServerArgs(speculative_algorithm='EAGLE3', speculative_draft_model_path='{tmp_path}/gone')\n"
    )
    out = run_cli("summary", "--json", str(log))
    segs = json.loads(out.stdout)["sources"][0]["segments"]
    assert segs[0]["config"]["draft"]["aux_layer_ids"] == [1, 23, 44]
    assert segs[1]["config"]["draft"]["note"] == "config.json not found"
    text = run_cli("summary", str(log)).stdout
    assert "seg 0 draft config: aux layers [1, 23, 44]" in text
