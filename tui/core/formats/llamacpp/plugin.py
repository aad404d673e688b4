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
# the LLAMA_TRACE step line (SLT_INF): not "(restore checkpoint)", not the debug ", new n_tokens"
_STEP = re.compile(r"id +(\d+) \| task +-?\d+ \| accepted +(\d+)/ *(\d+) draft tokens\s*$")
_SYNTH = re.compile(r"synthetic acceptance: n_max = (\d+), mean length = (\S+), rates = \[([^\]]*)\]")
SYNTHETIC_WORDS = "synthetic acceptance (a benchmarking mode: drawn at random, not measured)"


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
                al, acc, dr = (rc.col(c)[-1] for c in ("accept_len", "accepted", "drafted"))
                state.saw_request(al == al, (int(acc), int(dr)) if acc == acc and dr == dr else None)
                state.graphs = None
                # the traced steps pending now may belong to a request whose line was scanned:
                # no slot's histogram is given until its next request starts afresh
                state.broken.update(state.steps)
                state.steps.clear()

    def parse(self, state: StatsState, line: Line) -> Any:
        text = line.text
        at = text.find(grammar.TIMING)
        if at >= 0 and ("accepted" in text and "generated" in text):
            timing = parse_timing(line.source, line.line_no, line.offset, text, at, line.raw)
            if isinstance(timing, Record):  # the statistics lines after it: llamacpp.stats
                state.saw_request(timing.accept_len is not None, (timing.accepted or 0, timing.drafted or 0))
                timing.graphs_reused, state.graphs = state.graphs, None
                _traced_steps(state, timing)
                _mark_synthetic(state, timing)
            return timing
        if grammar.STATS in text:
            rec = parse_stats(line.source, line.line_no, line.offset, text, line.raw, state)
            _mark_synthetic(state, rec)
            return rec
        if grammar.STEP in text:
            m = _STEP.search(text)
            if m is None:
                return NOT_MINE  # the checkpoint form, the debug form: the same step again
            state.steps.setdefault(m.group(1), []).append(int(m.group(2)))
            return None
        if grammar.SYNTHETIC_ON in text or grammar.SYNTHETIC in text:
            return self._synthetic(state, line)
        if grammar.GRAPHS in text:
            g = _GRAPHS.search(text)
            if g is None:
                return NOT_MINE
            state.graphs = int(g.group(1))
            return None
        return self._startup(state, line)

    def _synthetic(self, state: StatsState, line: Line) -> Marker:
        """The synthetic acceptance lines of the run's start (0.3.36): its config says so
        (``synthetic``), every record after it carries ``extra["synthetic"]`` until a restart."""
        m = _SYNTH.search(line.text)
        said = state.synthetic or SYNTHETIC_WORDS
        if m is not None:
            said = (
                f"{SYNTHETIC_WORDS}: n_max = {m.group(1)}, mean length = {m.group(2)}, rates = [{m.group(3)}]"
            )
        state.synthetic = said
        return Marker(
            line.source,
            line.line_no,
            line.offset,
            self.name,
            "synthetic",
            line.raw,
            None,
            {"synthetic": said},
            None,
            continuation=True,
        )

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
        state.graphs = state.synthetic = None
        state.steps.clear()
        state.broken.clear()
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


def _traced_steps(state: StatsState, timing: Record) -> None:
    """The slot's traced verify steps (LLAMA_TRACE) since its previous per-request line: the
    request's step histogram (steps that accepted 0, 1, ... drafts), when they add up to the
    accepted count the request printed (else a step line is missing: none is given)."""
    slot = timing.extra.get("slot")
    steps = state.steps.pop(slot, None) if slot is not None else None
    if slot in state.broken:  # some of its steps came before a scanned buffer
        state.broken.discard(slot)
        return
    if not steps:
        return
    if sum(steps) != timing.accepted:
        timing.extra["traced_steps"] = f"{len(steps)} (their accepted drafts do not add up to the line's)"
        return
    hist = [0] * (max(steps) + 1)
    for a in steps:
        hist[a] += 1
    timing.step_histogram = tuple(hist)


def _mark_synthetic(state: StatsState, rec: object) -> None:
    if state.synthetic is not None and isinstance(rec, Record):
        rec.extra["synthetic"] = "true"
