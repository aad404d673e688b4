"""The llama.cpp plug-in (see :mod:`tui.core.formats.plugin`)."""

from __future__ import annotations

import re
from typing import Any

from tui.core.formats.fleet_names import FleetNames, Series
from tui.core.formats.llamacpp import grammar
from tui.core.formats.llamacpp.stats import StatsState, parse_stats
from tui.core.formats.llamacpp.timing import parse_timing
from tui.core.formats.plugin import NOT_MINE, Line, MetricsReader, PrintedRate
from tui.core.model.records import Marker, Record

# "...common_params_print_info: build 6000 (1a2b3c4d) with cc ... for x86_64-linux-gnu"
_BUILD = re.compile(r"(?:^|[\s:])build:? (\d+) \(([0-9a-f]+|unknown)\) with ")
_GRAPHS = re.compile(r"graphs reused = *(\d+)")


class LlamaCpp(PrintedRate):
    def new_state(self) -> StatsState:
        return StatsState()

    def restarted(self, state: StatsState) -> None:
        state.last.clear()

    def scanned(self, state: StatsState, runs: list[Any]) -> None:
        """Per-request lines read by the scanner: the statistics lines after them are read as
        after parsed ones (steps only, or the request's own counts when it printed no length)."""
        for rc in runs:
            if rc.kind == "timing" and rc.n:
                al = rc.col("accept_len")[-1]
                state.saw_request(al == al)  # NaN: no length printed
                state.graphs = None

    def parse(self, state: StatsState, line: Line) -> Any:
        text = line.text
        at = text.find(grammar.TIMING)
        if at >= 0 and ("accepted" in text and "generated" in text):
            timing = parse_timing(line.source, line.line_no, line.offset, text, at, line.raw)
            if isinstance(timing, Record):  # the statistics lines after it: llamacpp.stats
                state.saw_request(timing.accept_len is not None, (timing.accepted or 0, timing.drafted or 0))
                timing.graphs_reused, state.graphs = state.graphs, None
            return timing
        if grammar.STATS in text:
            return parse_stats(line.source, line.line_no, line.offset, text, line.raw, state)
        if grammar.GRAPHS in text:
            g = _GRAPHS.search(text)
            if g is None:
                return NOT_MINE
            state.graphs = int(g.group(1))
            return None
        return self._startup(state, line)

    def _startup(self, state: StatsState, line: Line) -> Any:
        """llama-server's startup lines: a restart marker (the counters start from zero)."""
        text = line.text
        version = None
        if grammar.BUILD_INFO in text:
            m = _BUILD.search(text)
            if m is None:
                return NOT_MINE
            version = f"b{m.group(1)}"
        elif grammar.SYSTEM_INFO not in text and not (
            grammar.INIT in text and text.rstrip().endswith("initializing ...")
        ):
            return NOT_MINE
        self.restarted(state)
        state.per_request = state.wants_len = False
        state.graphs = None
        return Marker(
            line.source, line.line_no, line.offset, self.name, "llamacpp_start", line.raw, None, {}, version
        )

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
