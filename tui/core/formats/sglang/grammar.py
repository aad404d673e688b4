"""SGLang's part of the one grammar (:mod:`tui.core.formats.grammar`): its anchors, the
``Decode batch`` field table and line shape, its line prefix."""

from __future__ import annotations

from tui.core.formats.shapes import FLOAT, INT, Field, Lit, OneOf, Opt, Prefix, Shape

DECODE = "Decode batch"
FINISH = "Finish: obj="  # one finished request, --log-requests (kind "request")
SERVER_ARGS = "server_args="  # ServerArgs(...) dump, quoted or not
READY = "ready to roll"  # "The server is fired up and ready to roll!"
ARGS_DICT = ("'speculative_", "'model_path': ")  # the 2026 dict-style args dump (possibly hard-wrapped)

# group 1: date and time; group 2: the rank tags
PREFIX = Prefix(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)((?: [A-Z][A-Z_]*\d+)*)\] ", 2)

DECODE_FIELDS: dict[str, tuple[str, str]] = {
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

DECODE_SHAPE = Shape(
    "sglang",
    "decode",
    PREFIX,
    DECODE,
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
