"""The vLLM plug-in (see :mod:`tui.core.formats.plugin`)."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, ClassVar

from tui.core.formats.fleet_names import FleetNames, Series
from tui.core.formats.markers import literal, parse_dict_args, parse_kv_args
from tui.core.formats.plugin import NOT_MINE, Found, Line, MetricsReader, PrintedRate
from tui.core.formats.text import at_message_start
from tui.core.formats.vllm import bench, grammar
from tui.core.formats.vllm.spec import (
    ENGINE_ANCHOR,
    SPEC_ANCHOR,
    V0_ANCHOR,
    VllmState,
    parse_engine,
    parse_spec,
)
from tui.core.model.records import EngineStats

if TYPE_CHECKING:
    from tui.core.formats.timestamps import TimestampReader

_VERSION = re.compile(r"vLLM API server version (\S+)")
_SERVER_VERSION = re.compile(r"vLLM server version (\S+?),? serving model (\S+)")
_LOGO_VERSION = re.compile(r"\u2580\u2584\u2580 \u2588.*?\bversion\s+(\S+)")
_ENGINE_INIT = re.compile(r"Initializing an? (?:V1 )?LLM engine \((v[^)]+)\) with config: ")
_SPEC_REPR = re.compile(r"SpeculativeConfig\((.*)\)$")  # vLLM 0.4-0.6: (draft_model='m', num_spec_tokens=5)
_REPR_KV = re.compile(r"(\w+)=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^,()\s]+)")
STATS_DISABLED_HINT = (
    "vLLM stats logging is off: no SpecDecoding metrics line will come (vLLM switches it off with "
    "more than one API server, --api-server-count > 1); run with --api-server-count 1, or read the "
    "server's /metrics (specwatch summary metrics+http://HOST:PORT/metrics)"
)
_SPEC_CONFIG_JSON = re.compile(r"speculative_config=(\{[^{}]*\}|SpeculativeConfig\([^()]*\)|None)")


class Vllm(PrintedRate):
    ends_wrapped_args: ClassVar[tuple[str, ...]] = (grammar.SPEC,)
    aux_layer_ids = (
        ("eagle_aux_hidden_state_layer_ids",),
        "absent: vLLM falls back to its per-model default layers",
    )

    def new_state(self) -> VllmState:
        return VllmState()

    def restarted(self, state: VllmState) -> None:
        state.v0_prev.clear()

    def busy(self, state: VllmState) -> bool:
        return state.bench is not None

    def block_line(self, state: VllmState, source: str, line: str) -> tuple[bool, Any]:
        done, got = bench.feed_block(state.bench, source, line)
        if done:
            state.bench = None
        return done, got

    def parse(self, state: VllmState, line: Line) -> Any:
        text = line.text
        at = text.find(SPEC_ANCHOR)
        anchor = SPEC_ANCHOR
        if at < 0:
            at = text.find(V0_ANCHOR)
            anchor = V0_ANCHOR
        if at >= 0 and at_message_start(text, at):
            return parse_spec(line.source, line.line_no, line.offset, text, at, anchor, line.raw, state)
        if grammar.ENGINE in text:
            at = text.find(ENGINE_ANCHOR)
            if at < 0 or not at_message_start(text, at):
                at = text.find(grammar.ENGINE)
            if at_message_start(text, at):
                ts = line.clock.read(text)
                return parse_engine(line.source, line.line_no, line.offset, text, at, ts, state)
        if grammar.BENCH in text:
            state.bench = bench.BenchBlock(line.line_no, line.offset, line.raw)
            return None
        return NOT_MINE

    def settle_scan(
        self, state: VllmState, clock: TimestampReader, edge: Any, head: Any, has_records: bool, source: str
    ) -> bool | None:
        """The engine line a buffer's first spec line pairs with may be in the buffer before; the
        year of its stamps is the line parser's (docs/formats.md, "V1 SpecDecoding metrics")."""
        settled: bool | None = True
        if edge.first_stamp is not None and edge.last_md is not None:
            settled = clock.settle_yearless(edge.first_stamp, edge.last_md, edge.year)
            if settled is False:
                return False
        pending = state.pending_engine
        if head is not None:
            e = pending.get(edge.process)
            if e is not None:
                head.values["throughput"][0] = math.nan if e.throughput is None else e.throughput
                head.values["running_req"][0] = math.nan if e.running_req is None else float(e.running_req)
                if e.engine is not None:
                    head.ranks = [f"engine {e.engine}"]
        if has_records:
            pending.pop(edge.process, None)
        if edge.tail is not None:
            t = edge.tail
            eng, tp, run = int(t["engine"]), t["throughput"], int(t["running_req"])
            pending[edge.process] = EngineStats(source, 0, 0, eng, None, tp, run, None, None, edge.process)
        return settled

    def marker(self, text: str) -> Found | None:
        if grammar.VERSION in text:
            m = _VERSION.search(text)
            return "version", self.name, {}, m.group(1) if m else None
        if grammar.SERVER_VERSION in text:
            m = _SERVER_VERSION.search(text)
            if m:
                return "version", self.name, {"model": m.group(2)}, m.group(1)
        if grammar.LOGO in text:
            m = _LOGO_VERSION.search(text)
            if m:
                return "version", self.name, {}, m.group(1)
        if grammar.NON_DEFAULT_ARGS in text:
            i = text.find(grammar.NON_DEFAULT_ARGS)
            return "non_default_args", self.name, parse_dict_args(text[i:]), None
        if grammar.ENGINE_INIT in text and "with config:" in text:
            m = _ENGINE_INIT.search(text)
            if m:
                body = text[m.end() :]
                cfg = parse_kv_args(body)
                sc = _SPEC_CONFIG_JSON.search(body)
                if sc and sc.group(1) != "None":
                    cfg["speculative_config"] = _speculative_config(sc.group(1))
                return "engine_init", self.name, cfg, m.group(1).removeprefix("v")  # "(v0.6.3)"
        if grammar.ARGS_NAMESPACE in text:
            i = text.find(grammar.ARGS_NAMESPACE)
            return "args", self.name, parse_kv_args(text[i + len("args: ") :]), None
        if grammar.STATS_DISABLED in text:
            return "startup", self.name, {"hint": STATS_DISABLED_HINT}, None
        return None

    def metrics(self) -> MetricsReader:
        from tui.core.formats.vllm.metrics import VllmMetrics  # only a /metrics source needs it

        return VllmMetrics(self.name)

    def fleet(self) -> FleetNames:
        return FleetNames(
            self.name,
            "counters",
            accepted=Series("vllm:spec_decode_num_accepted_tokens_total"),
            drafts=Series("vllm:spec_decode_num_drafts_total"),
            draft_tokens=Series("vllm:spec_decode_num_draft_tokens_total"),
            gen_tokens=Series("vllm:generation_tokens_total"),
            running=Series("vllm:num_requests_running"),
            created=Series("vllm:spec_decode_num_drafts_created"),
            instance_labels=("engine",),
        )


def _speculative_config(text: str) -> dict[str, Any] | str:
    """``speculative_config`` of an engine's config line: a dict (``{...}``, the V1 JSON form, or
    0.4-0.6's ``SpeculativeConfig(draft_model='m', num_spec_tokens=5)`` repr, draft model
    ``[ngram]`` for n-gram lookup), else the text as printed."""
    m = _SPEC_REPR.match(text)
    if m is None:
        return text
    kv = {k: literal(v) for k, v in _REPR_KV.findall(m.group(1))}
    out: dict[str, Any] = {}
    model = kv.get("draft_model")
    if model == "[ngram]":
        out["method"] = "ngram"
    elif isinstance(model, str):
        out["model"] = model
    if isinstance(kv.get("num_spec_tokens"), int):
        out["num_speculative_tokens"] = kv["num_spec_tokens"]
    return out
