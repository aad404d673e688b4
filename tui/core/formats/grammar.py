"""The grammar of every format, declared once (see docs/formats.md).

* :data:`ANCHORS`: every literal text the line parser acts on. A line containing none of them
  (after the markdown / ANSI cleaning of :func:`tui.core.formats.text.clean`) yields nothing;
  the line parser skips it with one substring test per anchor, the scanners skip it at
  ``memchr`` speed. Nothing else keeps a list of "texts that matter".
* :data:`SHAPES`: the line shapes the whole-buffer scanners read in bulk, as token sequences
  (literal text, typed fields, optional groups). The Python scanner's regular expressions are
  compiled from them (:func:`regex`); the C scanner (``_fastscan.c``) reads the most common form
  of each (every optional group present, except the SGLang iteration tag and vLLM's form-3 rate)
  and says so when a line fits only the wider shape, so the Python scanner reads that buffer.
  Both are checked against the line parser by property tests on generated and real lines. A line
  that carries an anchor but fits no shape sends its buffer to the line parser.
* The field tables the line parsers read by key (:data:`SGLANG_DECODE_FIELDS`,
  :data:`VLLM_SPEC_FIELDS`) are the same fields the shapes name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# -- anchors ---------------------------------------------------------------------------------
SGLANG_DECODE = "Decode batch"
VLLM_SPEC = "SpecDecoding metrics:"
VLLM_SPEC_V0 = "Speculative metrics:"  # V0, and the first V1 form
VLLM_ENGINE = "Avg prompt throughput"  # V1 "Engine NNN: Avg prompt ...", V0 stats line
LLAMACPP_TIMING = "draft acceptance"
SGLANG_FINISH = "Finish: obj="  # one finished request, --log-requests (kind "request")
LLAMACPP_STATS = "#gen drafts ="  # llama.cpp "statistics <impl>: ..." (cumulative counters)
OLLAMA_MLX = 'msg="speculative decode stats"'  # Ollama's MLX engine, one line per request
VLLM_BENCH = "---Speculative Decoding---"  # the title of `vllm bench serve`'s block
MARKER_ANCHORS = (
    "server_args=",  # SGLang ServerArgs(...) dump, quoted or not
    "ready to roll",  # SGLang "The server is fired up and ready to roll!"
    "Started server process",  # uvicorn
    "vLLM API server version",
    "non-default args:",  # vLLM, even "non-default args: {}"
    "LLM engine (",  # vLLM "Initializing a V1 LLM engine (v..) with config:"
    "'speculative_",  # SGLang 2026 dict-style args dump (possibly hard-wrapped)
    "'model_path': ",
)
# The first five keep their places: the C scanner knows them by index. The ones after them
# have no shape: a buffer holding one is the line parser's.
METRIC_ANCHORS = (
    SGLANG_DECODE,
    VLLM_SPEC,
    VLLM_SPEC_V0,
    VLLM_ENGINE,
    LLAMACPP_TIMING,
    SGLANG_FINISH,
    LLAMACPP_STATS,
    OLLAMA_MLX,
    VLLM_BENCH,
)
ANCHORS: tuple[str, ...] = METRIC_ANCHORS + MARKER_ANCHORS
# Bytes that :func:`tui.core.formats.text.clean` removes or rewrites: a line holding one may
# hold an anchor only once cleaned, so the line parser cleans it before looking.
CLEANED = ("\x1b", "\x00", "`", "**", "\ufffd[")

# -- field tables (key as printed -> Record attribute) ---------------------------------------
INT, FLOAT, PERCENT, BOOL = "int", "float", "percent", "bool"

SGLANG_DECODE_FIELDS: dict[str, tuple[str, str]] = {
    "#running-req": ("running_req", INT),
    "#token": ("tokens", INT),
    "#full token": ("tokens", INT),
    "token usage": ("token_usage", FLOAT),
    "full token usage": ("token_usage", FLOAT),
    "accept len": ("accept_len", FLOAT),
    "accept rate": ("accept_rate", FLOAT),
    "gen throughput (token/s)": ("throughput", FLOAT),
    "#queue-req": ("queue_req", INT),
}
VLLM_SPEC_FIELDS: dict[str, tuple[str, str]] = {
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


# -- shapes ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class Field:
    """A value: ``int`` (``\\d+``), ``float`` (``\\d+\\.\\d+``), ``percent`` (float then ``%``),
    ``list`` (floats joined by ``", "``); ``name`` None = read but not kept."""

    kind: str
    name: str | None = None


@dataclass(frozen=True)
class OneOf:
    options: tuple[str, ...]


@dataclass(frozen=True)
class Spaces:
    """Any number of spaces (llama.cpp pads its numbers)."""


@dataclass(frozen=True)
class Opt:
    """An optional group of tokens (all or nothing)."""

    parts: tuple[Lit | Field | OneOf | Spaces, ...]


Token = Lit | Field | OneOf | Spaces | Opt


@dataclass(frozen=True)
class Shape:
    family: str
    kind: str  # Record.kind, or "engine" for the vLLM stats line a spec line pairs with
    prefix: str  # "sglang": "[YYYY-MM-DD HH:MM:SS TAGS] "; "vllm": "(PROC pid=N) INFO MM-DD HH:MM:SS[.f] [file:N] "
    anchor: str  # one of ANCHORS: the text the scanners find the line by
    body: tuple[Token, ...]  # after the anchor, to the end of the line
    lead: tuple[Token, ...] = ()  # between the prefix and the anchor
    tail: str = ""  # regex of what may close the line (before an optional "\r")


SGLANG_DECODE_SHAPE = Shape(
    "sglang",
    "decode",
    "sglang",
    SGLANG_DECODE,
    (
        Opt((Lit(" ["), Field(INT), Lit("]"))),  # the iteration, when SGLANG_LOG_FORWARD_ITERS is set
        OneOf((",", ".")),
        Lit(" #running-req: "),
        Field(INT, "running_req"),
        Lit(", #token: "),
        Field(INT, "tokens"),
        Lit(", token usage: "),
        Field(FLOAT, "token_usage"),
        Opt((Lit(", accept len: "), Field(FLOAT, "accept_len"))),  # speculative decoding on
        Opt((Lit(", accept rate: "), Field(FLOAT, "accept_rate"))),  # 2025-10 onwards
        Opt(
            (Lit(", "), OneOf(("cuda", "npu", "cpu")), Lit(" graph: "), OneOf(("True", "False")))
        ),  # 2025-05 on
        Lit(", gen throughput (token/s): "),
        Field(FLOAT, "throughput"),
        Lit(", #queue-req: "),
        Field(INT, "queue_req"),
    ),
    tail=r"(?:, ?)?",
)

VLLM_SPEC_SHAPE = Shape(
    "vllm",
    "spec",
    "vllm",
    VLLM_SPEC,
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

VLLM_ENGINE_SHAPE = Shape(
    "vllm",
    "engine",
    "vllm",
    VLLM_ENGINE,
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
    lead=(Lit("Engine "), Field(INT, "engine"), Lit(": ")),
)

LLAMACPP_TIMING_SHAPE = Shape(
    "llamacpp",
    "timing",
    "llamacpp",
    LLAMACPP_TIMING,
    (
        Opt((Lit(" rate"),)),  # the old form: "draft acceptance rate = ..."
        Lit(" ="),
        Spaces(),
        Field(FLOAT, "accept_rate"),
        Spaces(),
        Lit("("),
        Spaces(),
        Field(INT, "accepted"),
        Lit(" accepted"),
        Spaces(),
        Lit("/"),
        Spaces(),
        Field(INT, "drafted"),
        Lit(" generated)"),
        # "mean acceptance length =" (PR #24536 review form), "mean len =" (the merged form)
        Opt(
            (
                Lit(", mean "),
                OneOf(("acceptance length", "len")),
                Lit(" ="),
                Spaces(),
                Field(FLOAT, "accept_len"),
            )
        ),
        Opt((Lit(", acceptance rate per position = ("), Field("list", "per_position"), Lit(")"))),
    ),
)

SHAPES = (SGLANG_DECODE_SHAPE, VLLM_SPEC_SHAPE, VLLM_ENGINE_SHAPE, LLAMACPP_TIMING_SHAPE)

# -- regex derivation ------------------------------------------------------------------------
_FIELD_RE = {
    INT: r"(\d+)",
    FLOAT: r"(\d+\.\d+)",
    PERCENT: r"(\d+\.\d+)%",
    "list": r"(\d+\.\d+(?:, \d+\.\d+)*)",
}
PREFIX_RE = {
    # group 1: date and time; group 2: the rank tags
    "sglang": r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)((?: [A-Z][A-Z_]*\d+)*)\] ",
    # group 1: the process tag; groups 2-7: month, day, hour, minute, second, fraction
    "vllm": r"(?:\((\w[\w ]*? pid=\d+)\) )?INFO (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))? \[[\w.]+:\d+\] ",
    # groups 1-4: minutes, seconds, ms, us since the server started; the slot and task
    "llamacpp": r"(\d+)\.(\d\d)\.(\d{3})\.(\d{3}) I slot print_timing: id +\d+ \| task +\d+ \| ",
}
PREFIX_GROUPS = {"sglang": 2, "vllm": 7, "llamacpp": 4}


def _token_re(t: Token, names: list[str | None]) -> str:
    if isinstance(t, Lit):
        return re.escape(t.text)
    if isinstance(t, OneOf):
        return "(?:" + "|".join(map(re.escape, t.options)) + ")"
    if isinstance(t, Spaces):
        return " *"
    if isinstance(t, Opt):
        return "(?:" + "".join(_token_re(p, names) for p in t.parts) + ")?"
    names.append(t.name)
    return _FIELD_RE[t.kind]


def regex(shape: Shape) -> tuple[re.Pattern[bytes], list[str | None]]:
    """A bytes pattern for a whole line of ``shape`` (``match`` it at the line start; it takes
    the newline) and the field name of each group after the prefix groups."""
    names: list[str | None] = []
    lead = "".join(_token_re(t, names) for t in shape.lead)
    body = "".join(_token_re(t, names) for t in shape.body)
    pat = PREFIX_RE[shape.prefix] + lead + re.escape(shape.anchor) + body + shape.tail + r"\r?\n"
    return re.compile(pat.encode()), names
