"""SGLang's part of the one grammar (:mod:`tui.core.formats.grammar`), read from its data
(``family.toml``): its anchors, its marker texts, the ``Decode batch`` shape; and the field table
its key-by-key reader uses for the forms the shape does not cover."""

from __future__ import annotations

from tui.core.formats.families import data
from tui.core.formats.shapes import FLOAT, INT

DATA = data("sglang")
DECODE = DATA.anchors["decode"]
FINISH = DATA.anchors["finish"]
SERVER_ARGS = DATA.markers["server_args"]
READY = DATA.markers["ready"]
ARGS_DICT = (DATA.markers["args_dict_spec"], DATA.markers["args_dict_model"])

# key -> (Record attribute, number syntax), for every form of the line (the shape names the
# canonical form's fields)
DECODE_FIELDS: dict[str, tuple[str, str]] = {
    "#running-req": ("running_req", INT),
    "#token": ("tokens", INT),
    "#full token": ("tokens", INT),
    "token usage": ("token_usage", FLOAT),
    "full token usage": ("token_usage", FLOAT),
    "accept len": ("accept_len", FLOAT),
    "accept rate": ("accept_rate", FLOAT),
    "cap len": ("cap_len", FLOAT),  # 0.5.23: quantities of their own (Record.more)
    "block accept len": ("block_accept_len", FLOAT),
    "gen throughput (token/s)": ("throughput", FLOAT),
    "#queue-req": ("queue_req", INT),
}

DECODE_SHAPE = DATA.shape_of("decode")
PREFIX = DECODE_SHAPE.prefix
