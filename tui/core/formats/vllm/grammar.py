"""vLLM's part of the one grammar (:mod:`tui.core.formats.grammar`), read from its data
(``family.toml``): its anchors, its marker texts, the spec and engine line shapes; and the
spec-line field table its key-by-key reader uses for the older forms."""

from __future__ import annotations

from tui.core.formats.families import data
from tui.core.formats.shapes import FLOAT, INT, PERCENT

DATA = data("vllm")
SPEC = DATA.anchors["spec"]
SPEC_V0 = DATA.anchors["spec_v0"]
ENGINE = DATA.anchors["engine"]
ENGINE_LEAD = "Engine "  # V1: "Engine NNN: " before ENGINE (the engine shape's lead)
BENCH = DATA.anchors["bench"]
VERSION = DATA.markers["version"]
SERVER_VERSION = DATA.markers["server_version"]
LOGO = DATA.markers["logo"]
NON_DEFAULT_ARGS = DATA.markers["non_default_args"]
ENGINE_INIT = DATA.markers["engine_init"]
ARGS_NAMESPACE = DATA.markers["args_namespace"]
STATS_DISABLED = DATA.markers["stats_logging_disabled"]

SPEC_FIELDS: dict[str, tuple[str, str]] = {
    "Mean acceptance length": ("accept_len", FLOAT),
    "Avg Draft acceptance rate": ("accept_rate", PERCENT),
    "Draft acceptance rate": ("accept_rate", PERCENT),  # "%" optional: V0 prints a fraction
    "Accepted": ("accepted", INT),
    "Number of accepted tokens": ("accepted", INT),
    "Drafted": ("drafted", INT),
    "Number of draft tokens": ("drafted", INT),
    "Number of draft tokens tokens": ("drafted", INT),  # early V0 doubled the word
    "Per-position acceptance rate": ("per_position", FLOAT),
}

SPEC_SHAPE = DATA.shape_of("spec")
ENGINE_SHAPE = DATA.shape_of("engine")
PREFIX = SPEC_SHAPE.prefix
