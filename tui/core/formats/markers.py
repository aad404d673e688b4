"""Reading the server arguments startup markers carry (docs/formats.md, "Startup markers"); the
markers themselves are found by the families' plug-ins (``Format.marker``), except uvicorn's:

* SGLang ``server_args=ServerArgs(k=v, ...)`` (one huge line, often hard-wrapped mid-token) and
  the 2026 dict-style dump (``'speculative_num_steps': 3, ...``);
  ``The server is fired up and ready to roll!``.
* vLLM ``vLLM API server version X``, ``non-default args: {...}``,
  ``Initializing a V1 LLM engine (vX) with config: ...`` / ``Initializing an LLM engine (vX)``.
* uvicorn ``Started server process [PID]`` (both).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from tui.core.formats.grammar import UVICORN_START

# key=value inside ServerArgs(...) / engine config reprs.
_KV = re.compile(
    r"(?:^|[(,\s])(\w+)=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\[[^\]]*\]|\{[^{}]*\}|[^,()\s]+)"
)
# 'key': value inside dict reprs.
_DKV = re.compile(r"'(\w+)': ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\[[^\]]*\]|\{[^{}]*\}|[^,{}\s][^,{}]*)")
_SPEC_CONFIG = re.compile(r"'speculative_config': \{([^{}]*)\}")

# The args we keep (others are ignored: the dump has hundreds).
KEYS = {
    "model_path",
    "model",
    "served_model_name",
    "tp_size",
    "dp_size",
    "pp_size",
    "ep_size",
    "tensor_parallel_size",
    "data_parallel_size",
    "enable_dp_attention",
    "decode_log_interval",
    "speculative_algorithm",
    "speculative_draft_model_path",
    "speculative_draft_model_revision",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "speculative_token_map",
    "speculative_attention_mode",
    "speculative_accept_threshold_single",
    "speculative_accept_threshold_acc",
    "speculative_config",
    "num_speculative_tokens",
    "method",
    "version",
    "dtype",
    "quantization",
    "kv_cache_dtype",
}


def literal(value: str) -> Any:
    """A repr'd value to Python: ``'x'`` → x, ``3`` → 3, ``None`` → None; else the text."""
    v = value.strip()
    if v in ("None", "True", "False") or v[:1] in "'\"[{-0123456789":
        try:
            return ast.literal_eval(v)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return v.strip("'\"")
    return v


def parse_kv_args(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in _KV.finditer(text):
        if m.group(1) in KEYS:
            out[m.group(1)] = literal(m.group(2))
    return out


def parse_dict_args(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    sc = _SPEC_CONFIG.search(text)
    if sc:
        inner = parse_dict_args(sc.group(1))
        out["speculative_config"] = inner
    for m in _DKV.finditer(text):
        key = m.group(1)
        if key in KEYS and key != "speculative_config" and key not in out:
            out[key] = literal(m.group(2))
    return out


MAX_LITERAL = 512 * 1024  # a dict dump longer than this is read by the patterns, not evaluated


def parse_literal_dict(text: str) -> dict[str, Any]:
    """The args of a one-line Python dict dump (``{'model_path': '...', ...}``, SGLang >= 0.5.2x
    ``server_args={...}``): evaluated as a literal (``ast.literal_eval``: no code runs; at most
    :data:`MAX_LITERAL` characters), falling back to the ``'key': value`` patterns when the dump
    is cut, too long, or holds a value that is not a literal (an enum's or a path's repr)."""
    body = text[text.find("{") :].rstrip()
    if body and len(body) <= MAX_LITERAL and body.endswith("}"):
        try:
            d = ast.literal_eval(body)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            d = None
        if isinstance(d, dict):
            return {
                k: v for k, v in d.items() if k in KEYS and (k != "speculative_config" or isinstance(v, dict))
            }
    return parse_dict_args(body)


def parse_server_args(text: str) -> dict[str, Any]:
    """``server_args=ServerArgs(k=v, ...)`` (key=value) or ``server_args={'k': v, ...}`` (a dict)."""
    i = text.find("server_args=")
    tail = text[i + len("server_args=") :] if i >= 0 else text
    if tail.lstrip().startswith("{"):
        return parse_literal_dict(tail)
    return parse_kv_args(text)


def detect(text: str) -> tuple[str, str | None, dict[str, Any], str | None] | None:
    """(kind, family, config, version) of a marker that belongs to no family: uvicorn's
    ``Started server process`` (the families' own markers are their plug-ins')."""
    if UVICORN_START in text:
        return "uvicorn_start", None, {}, None
    return None
