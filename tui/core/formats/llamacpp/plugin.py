"""The llama.cpp plug-in (see :mod:`tui.core.formats.plugin`)."""

from __future__ import annotations

from typing import Any, ClassVar

from tui.core.formats.fleet_names import FleetNames, Series
from tui.core.formats.llamacpp import grammar
from tui.core.formats.llamacpp.stats import StatsState, parse_stats
from tui.core.formats.llamacpp.timing import parse_timing
from tui.core.formats.plugin import NOT_MINE, Line, MetricsReader, PrintedRate
from tui.core.model.records import Record


class LlamaCpp(PrintedRate):
    name = "llamacpp"
    display = "llama.cpp"
    anchors: ClassVar[tuple[str, ...]] = (grammar.TIMING, grammar.STATS)
    elapsed_clock = True  # print_timing lines carry time since the server started
    # it drafts a varying number of tokens per step: its per-position list is as long as the
    # longest accepted run, not a k
    depth_from_records = False
    request_kinds: ClassVar[frozenset[str]] = frozenset({"timing"})  # one line per request
    metric_prefixes: ClassVar[tuple[str, ...]] = ("llamacpp:",)
    no_spec_note = (
        "llama.cpp metrics without spec-decode counters: speculative decoding off, or a build "
        "before PR #26389"
    )
    looked_for = "llamacpp:spec_decode_num_drafts_total"

    def new_state(self) -> StatsState:
        return StatsState()

    def parse(self, state: StatsState, line: Line) -> Any:
        text = line.text
        at = text.find(grammar.TIMING)
        if at >= 0 and ("accepted" in text and "generated" in text):
            timing = parse_timing(line.source, line.line_no, line.offset, text, at, line.raw)
            if isinstance(timing, Record):  # the statistics lines after it: llamacpp.stats
                state.saw_request(timing.accept_len is not None)
            return timing
        if grammar.STATS in text:
            return parse_stats(line.source, line.line_no, line.offset, text, line.raw, state)
        return NOT_MINE

    def metrics(self) -> MetricsReader:
        from tui.core.formats.llamacpp.metrics import LlamaCppMetrics  # only a /metrics source needs it

        return LlamaCppMetrics(self.name)

    def fleet(self) -> FleetNames:
        return FleetNames(
            self.name,
            "counters",
            accepted=Series("llamacpp:spec_decode_num_accepted_tokens_total"),
            drafts=Series("llamacpp:spec_decode_num_drafts_total"),
            draft_tokens=Series("llamacpp:spec_decode_num_draft_tokens_total"),
            gen_tokens=Series("llamacpp:tokens_predicted_total"),
            running=Series("llamacpp:requests_processing"),
        )
