"""The SGLang plug-in (see :mod:`tui.core.formats.plugin`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from tui.core.formats.fleet_names import FleetNames, Series
from tui.core.formats.markers import parse_dict_args, parse_server_args
from tui.core.formats.plugin import NOT_MINE, Format, Found, Line, MetricsReader, RateEvidence
from tui.core.formats.rate_definition import RateDefinition
from tui.core.formats.sglang import grammar
from tui.core.formats.sglang.decode import parse_decode
from tui.core.formats.sglang.finish import parse_finish
from tui.core.formats.sglang.rates import infer_sglang
from tui.core.formats.text import at_message_start

AUX_DEFAULT = (
    "absent: SGLang falls back to its default layers [2, L//2, L-3] of the target "
    "(L = the target's layer count; ids are shifted by +1 for the embedding)"
)


def looks_like_args_dict(text: str) -> bool:
    """A fragment of SGLang's dict-style args dump (it may be wrapped mid-key)."""
    return any(a in text for a in grammar.ARGS_DICT) and text.count("': ") >= 3


class SGLang(Format):
    wrapped_markers: ClassVar[dict[str, tuple[str, Callable[[str], dict[str, Any]]]]] = {
        "server_args": (grammar.SERVER_ARGS, parse_server_args),
        "args_dict": ("", parse_dict_args),
    }
    ends_wrapped_args: ClassVar[tuple[str, ...]] = (grammar.DECODE,)
    aux_layer_ids = (("eagle_config", "eagle_aux_hidden_state_layer_ids"), AUX_DEFAULT)

    def parse(self, state: Any, line: Line) -> Any:
        text = line.text
        at = text.find(grammar.FINISH)
        if at >= 0 and at_message_start(text, at):  # first: its request text may hold anything
            return parse_finish(line.source, line.line_no, line.offset, text, at, line.raw)
        at = text.find(grammar.DECODE)
        if at >= 0 and at_message_start(text, at):
            return parse_decode(line.source, line.line_no, line.offset, text, at, line.raw)
        return NOT_MINE

    def marker(self, text: str) -> Found | None:
        if grammar.SERVER_ARGS in text:
            i = text.find(grammar.SERVER_ARGS)
            return "server_args", self.name, parse_server_args(text[i:]), None
        if grammar.READY in text and "The server is fired up" in text:
            return "ready", self.name, {}, None
        return None

    def loose_marker(self, text: str) -> Found | None:
        if looks_like_args_dict(text):
            return "args_dict", self.name, parse_dict_args(text), None
        return None

    def rate_definition(self, seen: RateEvidence) -> RateDefinition:
        c = seen.config
        return infer_sglang(seen.pairs, c.num_steps, c.effective_num_draft_tokens, seen.first_ts)

    def metrics(self) -> MetricsReader:
        from tui.core.formats.sglang.metrics import SglangMetrics  # only a /metrics source needs it

        return SglangMetrics(self.name)

    def fleet(self) -> FleetNames:
        return FleetNames(
            self.name,
            "gauge",
            accept_len=Series("sglang:spec_accept_length"),
            throughput=Series("sglang:gen_throughput"),
            instance_labels=("dp_rank", "tp_rank", "pp_rank"),
        )
