"""The draft model's own ``config.json``: which target layers an EAGLE-3 drafter reads.

Neither server logs the aux hidden-state layer ids (docs/formats-metrics.md); when acceptance
collapses after a config change, they are what a user needs to see, per segment. SGLang reads
``eagle_config.eagle_aux_hidden_state_layer_ids`` (nested) and silently falls back to its default
layers when it is missing; vLLM reads the top-level ``eagle_aux_hidden_state_layer_ids``.

This module only interprets the file's text; where it comes from (a local path, or the same SSH
connection as the log) is the caller's business. A missing or unreadable file is a note, never
an error.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from tui.core.formats import registry

MAX_CONFIG_BYTES = 4 << 20


def looks_like_path(path: str | None) -> bool:
    """A filesystem path (absolute, ~, ./), not a hub id such as ``meta-llama/Llama-3.2-1B``."""
    return bool(path) and (path.startswith(("/", "~", "./", "../")))  # type: ignore[union-attr]


def facts_from_json(text: str | bytes, family: str | None, path: str) -> dict[str, Any]:
    """What a user needs from a draft ``config.json`` (see the module docstring)."""
    facts: dict[str, Any] = {"config_path": path}
    try:
        cfg = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        facts["note"] = f"config.json is not valid JSON: {exc}"
        return facts
    if not isinstance(cfg, dict):
        facts["note"] = "config.json is not a JSON object"
        return facts
    archs = cfg.get("architectures")
    if isinstance(archs, list) and archs:
        facts["architecture"] = str(archs[0])
    for key in ("num_hidden_layers", "n_layer", "num_layers"):
        if isinstance(cfg.get(key), int):
            facts["num_hidden_layers"] = cfg[key]
            break
    ids, where, default, other = _aux_ids(cfg, family)
    if isinstance(ids, list):
        facts["aux_layer_ids"] = ids
        facts["aux_layer_ids_key"] = where
    else:
        facts["aux_layer_ids"] = None
        facts["note"] = default
        if isinstance(other, list):
            facts["note"] += f"; the file has {other} under the key the other server reads"
    return facts


def _key_value(cfg: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path[:-1]:
        inner = cfg.get(key)
        cfg = inner if isinstance(inner, dict) else {}
    return cfg.get(path[-1])


def _aux_ids(cfg: dict[str, Any], family: str | None) -> tuple[Any, str, str, Any]:
    """(the aux layer ids where ``family`` reads them, that key, the note without them, the ids
    under the key the other layout uses). A family that names no key reads the EAGLE-3
    reference layout: the first family's (in the registry's order) that names one."""
    own = registry.get(family).aux_layer_ids or next(
        f.aux_layer_ids for f in registry.FORMATS if f.aux_layer_ids
    )
    assert own is not None
    path, default = own
    others = [f.aux_layer_ids[0] for f in registry.FORMATS if f.aux_layer_ids and f.aux_layer_ids[0] != path]
    other = next((v for p in others if (v := _key_value(cfg, p)) is not None), None)
    return _key_value(cfg, path), ".".join(path), default, other


def read_local(draft_path: str, family: str | None) -> dict[str, Any]:
    """Facts from ``DRAFT/config.json`` on this machine; a note when it cannot be read."""
    path = os.path.join(os.path.expanduser(draft_path), "config.json")
    if not looks_like_path(draft_path):
        return {
            "config_path": None,
            "note": f"{draft_path!r} is not a local path (a hub id?): config not read",
        }
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return {"config_path": path, "note": "config.json not found"}
    except OSError as exc:
        return {"config_path": path, "note": f"config.json unreadable: {exc.strerror or exc}"}
    if len(data) > MAX_CONFIG_BYTES:
        return {"config_path": path, "note": "config.json larger than 4 MiB: not read"}
    return facts_from_json(data, family, path)


Resolver = Callable[[str, "str | None"], dict[str, Any]]


def attach(stats: Any, resolve: Resolver = read_local) -> None:
    """Fill ``config.draft`` of every segment of a :class:`SourceStats` that names a draft model."""
    cache: dict[tuple[str, str | None], dict[str, Any]] = {}
    for seg in stats.segments:
        cfg = seg.config
        if cfg.draft_model_path and not cfg.draft:
            key = (cfg.draft_model_path, cfg.family)
            if key not in cache:
                cache[key] = resolve(cfg.draft_model_path, cfg.family)
            cfg.draft = dict(cache[key])
