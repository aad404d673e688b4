"""`summary --json` carries every key docs/statistics.md documents, for SGLang, vLLM and llama.cpp inputs; and
`summary` text fits $COLUMNS (issue 13 item 4, issue 12 item 5)."""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from _cli_util import run_cli

from tui.cli.summary_fit import elide_middle, fit, table

ROOT = Path(__file__).parent.resolve().parents[1]
SAMPLES = ROOT / "sample_logs"
FORMATS = ROOT / "tests" / "fixtures" / "formats"
INPUTS = {
    "sglang": SAMPLES / "sglang_eagle3_restart.log",
    "vllm": SAMPLES / "vllm_v1_eagle3.log",
    "llamacpp": FORMATS / "llamacpp_print_timing_acceptance.log",
}


def run(*args: str, columns: int | None = None) -> subprocess.CompletedProcess:
    return run_cli(*args, env={"COLUMNS": str(columns)} if columns is not None else None)


# -- README's key block, parsed ------------------------------------------------------------------
Spec = dict[str, "Spec | None"]


def readme_spec() -> Spec:
    text = (ROOT / "docs" / "statistics.md").read_text()  # moved there from the README
    start = text.index("Scripts can rely on these keys")
    block = text[text.index("```", start) + 3 :]
    block = block[: block.index("```")]
    tokens = re.findall(r'"[^"]*"|\.\.\.|[{}\[\]:,|]|[^\s{}\[\]:,|"]+', block)
    pos = 0

    def value() -> Spec | None:
        nonlocal pos
        tok = tokens[pos]
        if tok == "{":
            return obj()
        if tok == "[":
            pos += 1
            inner = value() if tokens[pos] in ("{", "[") else None
            while tokens[pos] != "]":
                pos += 1
            pos += 1
            return inner
        pos += 1  # a placeholder: lo, hi, null, ...
        return None

    def obj() -> Spec:
        nonlocal pos
        pos += 1  # {
        out: Spec = {}
        while tokens[pos] != "}":
            tok = tokens[pos]
            if tok.startswith('"'):
                key, sub = tok.strip('"'), None
                pos += 1
                if tokens[pos] == ":":
                    pos += 1
                    sub = value()
                    while tokens[pos] == "|":
                        pos += 1
                        value()
                out[key] = sub
            else:
                pos += 1  # , or ...
        pos += 1
        return out

    spec = obj()
    assert "sources" in spec and "comparison" in spec
    return spec


def missing(spec: Spec, value: object, path: str = "") -> list[str]:
    """Documented keys absent from ``value`` (null values stop the descent: null is allowed)."""
    out: list[str] = []
    if isinstance(value, list):
        for i, v in enumerate(value):
            out += missing(spec, v, f"{path}[{i}]")
        return out
    if not isinstance(value, dict):
        return out
    for key, sub in spec.items():
        if key not in value:
            out.append(f"{path}.{key}")
        elif sub:
            out += missing(sub, value[key], f"{path}.{key}")
    return out


def test_readme_block_is_parsed():
    spec = readme_spec()
    seg = spec["sources"]["segments"]  # type: ignore[index]
    assert seg is not None and {"ranks", "per_position", "by_batch_size", "speculation"} <= set(seg)
    assert {"accept_len_load_adjusted", "throughput"} <= set(spec["comparison"] or {})


@pytest.mark.parametrize("family", sorted(INPUTS))
def test_every_documented_key_is_present(family):
    spec = readme_spec()
    d = json.loads(run("summary", "--json", str(INPUTS[family])).stdout)
    assert d["sources"][0]["family"] == family
    gone = missing(spec, d)
    assert not gone, gone
    seg = d["sources"][0]["segments"][-1]
    assert seg["ranks"] is None  # one rank: null, not left out


@pytest.mark.parametrize("pair", [("sglang", "vllm"), ("vllm", "llamacpp"), ("llamacpp", "sglang")])
def test_every_documented_comparison_key_is_present(pair):
    d = json.loads(run("summary", "--json", *(str(INPUTS[p]) for p in pair)).stdout)
    c = d["comparison"]
    gone = missing({k: v for k, v in readme_spec().items() if k == "comparison"}, d)
    gone = [g for g in gone if not g.startswith(".comparison.accept_rate")]  # only when both print one
    assert not gone, gone
    assert c["accept_len_load_adjusted"]["verdict"] in ("higher", "lower", "no_difference", "insufficient")


# -- text width ------------------------------------------------------------------------------------
@pytest.mark.parametrize("columns", [100, 80])
def test_summary_text_fits_columns(columns):
    logs = sorted(str(p) for p in SAMPLES.glob("*.log"))
    out = run("summary", *logs, columns=columns)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert max(map(len, lines)) <= columns
    # nothing dropped for good: what the narrow table leaves out is printed under it
    assert "EAGLE3 steps=3 topk=1 ndt=4" in out.stdout and "server_args" in out.stdout
    assert "accept len by batch size" in out.stdout and "speculation:" in out.stdout
    # every number of the wide output is in the narrow one, whole (the narrow one adds "seg N")
    wide = run("summary", *logs, columns=400).stdout
    num = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?![\w.])")
    assert not Counter(num.findall(wide)) - Counter(num.findall(out.stdout))


def test_draft_config_note_once_per_source_and_only_when_it_matters():
    out = run("summary", str(SAMPLES / "sglang_eagle3_restart.log"), str(SAMPLES / "vllm_v1_eagle3.log"))
    assert "config.json not found" not in out.stdout  # looked for, but acceptance is fine


def test_draft_config_note_where_no_draft_is_accepted(tmp_path):
    log = tmp_path / "stuck.log"
    log.write_text(
        f"[2026-06-01 00:00:00] server_args=ServerArgs(speculative_algorithm='EAGLE3', "
        f"speculative_draft_model_path='{tmp_path}/gone')\n"
        + "".join(
            f"[2026-06-01 00:01:{i:02d}] Decode batch, #running-req: 1, accept len: 1.00, accept rate: 0.00\n"
            for i in range(8)
        )
        + f"[2026-06-01 01:00:00] server_args=ServerArgs(speculative_algorithm='EAGLE3', "
        f"speculative_draft_model_path='{tmp_path}/gone')\n"
        + "".join(
            f"[2026-06-01 01:01:{i:02d}] Decode batch, #running-req: 1, accept len: 1.00, accept rate: 0.00\n"
            for i in range(8)
        )
    )
    text = run("summary", str(log)).stdout
    assert text.count("config.json not found") == 1
    assert "seg 0, 1 draft config: config.json not found" in text


def test_no_acceptance_warning(tmp_path):
    log = tmp_path / "plain.log"
    log.write_text(
        "".join(
            f"[2026-06-01 00:01:{i:02d}] Decode batch, #running-req: 4, #token: 900, token usage: 0.10, "
            f"cuda graph: True, gen throughput (token/s): 900.00, #queue-req: 0\n"
            for i in range(5)
        )
        + "hello\n"
    )
    text = run("summary", str(log)).stdout
    assert "no speculative-decoding metric found — is speculation on?" in text
    assert "6 lines read, 5 metric lines, none with acceptance" in text and "formats read: SGLang" in text
    text = run("summary", f"baseline={log}").stdout
    assert "(expected: it is labelled baseline)" in text
    ok = run("summary", str(SAMPLES / "ab_a.log")).stdout
    assert "no speculative-decoding metric" not in ok


def test_fit_helpers():
    assert elide_middle("abcdefghij", 5) == "ab…ij" and elide_middle("abc", 5) == "abc"
    t, kept = table([["0", "a long piece of text", "1524"]], ["seg", "config", "records"], 20, drop=(1,))
    assert t[0].split() == ["seg", "records"] and kept == [0, 2] and all(len(x) <= 20 for x in t)
    assert fit(["  " + "word " * 30], 40) == [
        x for x in fit(["  " + "word " * 30], 40) if len(x) <= 40 and x.startswith("  ")
    ]
