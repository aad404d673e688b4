"""vLLM's part of the one grammar (:mod:`tui.core.formats.grammar`): its anchors, the spec-line
field table, the spec and engine line shapes, its line prefix."""

from __future__ import annotations

from tui.core.formats.shapes import FLOAT, INT, PERCENT, Field, Lit, Opt, Prefix, Shape

SPEC = "SpecDecoding metrics:"
SPEC_V0 = "Speculative metrics:"  # V0, and the first V1 form
ENGINE = "Avg prompt throughput"  # V1 "Engine NNN: Avg prompt ...", V0 stats line
ENGINE_LEAD = "Engine "  # V1: "Engine NNN: " before ENGINE
BENCH = "---Speculative Decoding---"  # the title of `vllm bench serve`'s block
VERSION = "vLLM API server version"
# vLLM 0.3x (vllm/entrypoints/common/startup.py log_version_and_model): "vLLM server version X,
# serving model M", or (the default on a terminal) a logo whose second line ends "version X"
SERVER_VERSION = "vLLM server version"
LOGO = "\u2580\u2584\u2580 \u2588"  # "▀▄▀ █", in the logo line that carries the version
NON_DEFAULT_ARGS = "non-default args:"  # even "non-default args: {}"
ENGINE_INIT = "LLM engine ("  # "Initializing a V1 LLM engine (v..) with config:"

# group 1: the process tag; groups 2-7: month, day, hour, minute, second, fraction
PREFIX = Prefix(
    r"(?:\((\w[\w ]*? pid=\d+)\) )?INFO (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))? \[[\w.]+:\d+\] ", 7
)

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

SPEC_SHAPE = Shape(
    "vllm",
    "spec",
    PREFIX,
    SPEC,
    (
        Lit(" "),
        Opt((Lit("Draft acceptance rate: "), Field(PERCENT, "accept_rate"), Lit(", "))),
        Lit("Mean acceptance length: "),
        Field(FLOAT, "accept_len"),
        Lit(", "),
        Opt(
            (
                Lit("Accepted throughput: "),
                Field(FLOAT),
                Lit(" tokens/s, Drafted throughput: "),
                Field(FLOAT),
                Lit(" tokens/s, "),
            )
        ),
        Lit("Accepted: "),
        Field(INT, "accepted"),
        Lit(" tokens, Drafted: "),
        Field(INT, "drafted"),
        Lit(" tokens, Per-position acceptance rate: "),
        Field("list", "per_position"),
        Opt((Lit(", Avg Draft acceptance rate: "), Field(PERCENT, "accept_rate"))),
    ),
)

ENGINE_SHAPE = Shape(
    "vllm",
    "engine",
    PREFIX,
    ENGINE,
    (
        Lit(": "),
        Field(FLOAT),
        Lit(" tokens/s, Avg generation throughput: "),
        Field(FLOAT, "throughput"),
        Lit(" tokens/s, Running: "),
        Field(INT, "running_req"),
        Lit(" reqs, Waiting: "),
        Field(INT),
        Lit(" reqs, "),
        Opt((Lit("Deferred: "), Field(INT), Lit(" reqs, "))),  # the later, conditional parts
        Opt((Lit("Preemptions: "), Field(INT), Lit(", "))),
        Lit("GPU KV cache usage: "),
        Field(PERCENT),
        Lit(", Prefix cache hit rate: "),
        Field(PERCENT),
        Opt((Lit(", Corrupted: "), Field(INT), Lit(" reqs"))),
        Opt((Lit(", External prefix cache hit rate: "), Field(PERCENT))),
        Opt((Lit(", MM cache hit rate: "), Field(PERCENT))),
    ),
    lead=(Lit(ENGINE_LEAD), Field(INT, "engine"), Lit(": ")),
)
