"""Segments: the stretches of a log between restarts, each with the config that produced it.

A segment opens at the start of a source, at a startup marker (args dump, version line, ready
line, uvicorn start) and at a source event that replaces the data (truncation, rotation, a
switch to a newer file, a manual "I restarted the server" mark). Markers that follow each other
with no metric record between them belong to one startup and update the same segment.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from tui.core.records import EngineStats, Item, Malformed, Marker, Record, format_ts
from tui.core.server_config import ServerConfig
from tui.core.sources.base import SourceEvent
from tui.core.stats import rates
from tui.core.stats.metrics import MetricSet

MAX_RANKS = 256
MAX_SEGMENTS = 500  # older ones are dropped (their records still count in the source totals)
STUCK_MIN = 5
FEW = 30


class Segment:
    __slots__ = (
        "index",
        "reason",
        "start_line",
        "start_ts",
        "config",
        "all",
        "ranks",
        "malformed",
        "_rate_pairs",
        "_rate_def",
        "markers",
        "label",
        "printed_def",
    )

    def __init__(
        self,
        index: int,
        reason: str,
        start_line: int | None,
        start_ts: float | None,
        config: ServerConfig | None = None,
        label: str | None = None,
    ) -> None:
        self.index = index
        self.reason = reason
        self.start_line = start_line
        self.start_ts = start_ts
        self.config = config or ServerConfig()
        self.all = MetricSet()
        self.ranks: dict[str, MetricSet] = {}
        self.malformed = 0
        self._rate_pairs: list[tuple[float, float]] = []
        self._rate_def: rates.RateDefinition | None = None
        self.markers: list[str] = []
        self.label = label
        self.printed_def: str | None = None  # as the records state it (vLLM, llama.cpp)

    @property
    def records(self) -> int:
        return self.all.records

    def rank_set(self, rank: str) -> MetricSet | None:
        m = self.ranks.get(rank)
        if m is None and len(self.ranks) < MAX_RANKS:
            m = self.ranks[rank] = MetricSet()
        return m

    def add(self, r: Record) -> None:
        self.all.add(r)
        if r.rank is not None:
            m = self.rank_set(r.rank)
            if m is not None:
                m.add(r)
        if (
            r.family == "sglang"
            and r.accept_rate is not None
            and r.accept_len is not None
            and len(self._rate_pairs) < rates.MAX_SAMPLES
        ):
            self._rate_pairs.append((r.accept_len, r.accept_rate))
            self._rate_def = None
        if r.rate_definition is not None and self.printed_def is None:
            self.printed_def = r.rate_definition
        if r.family and not self.config.family:
            self.config.family = r.family
            self._rate_def = None

    def add_rate_pairs(self, pairs: Iterable[tuple[float, float]]) -> None:
        room = rates.MAX_SAMPLES - len(self._rate_pairs)
        if room > 0:
            self._rate_pairs.extend(list(pairs)[:room])
            self._rate_def = None

    def rate_definition(self) -> rates.RateDefinition:
        if self._rate_def is not None:
            return self._rate_def
        c = self.config
        if c.family in ("vllm", "llamacpp", "trtllm"):  # cheap, and it changes as records come: not cached
            rd = rates.RateDefinition(
                self.printed_def,
                c.drafts_per_step,
                "as the server defines it (vLLM / llama.cpp / TensorRT-LLM)",
            )
            if rd.drafts_per_step is None and c.family != "llamacpp":
                # llama.cpp drafts a varying number of tokens per step: its per-position list is
                # as long as the longest accepted run, not a k
                rd.drafts_per_step = self._vllm_k()
            return rd
        rd = rates.infer_sglang(
            self._rate_pairs, c.num_steps, c.effective_num_draft_tokens, self.all.first_ts
        )
        self._rate_def = rd
        return rd

    def _vllm_k(self) -> int | None:
        pp = self.all.per_position()
        return len(pp) if pp else None

    def diagnostics(self) -> list[dict]:
        out = []
        al = self.all.accept_len
        if al.n >= STUCK_MIN and al.min == 1.0 and al.max == 1.0:
            configured = self.config.speculative or self.config.family is None
            out.append(
                {
                    "code": "accept_len_stuck_at_1",
                    "level": "warning",
                    "message": f"accept len is exactly 1.00 in all {al.n} records"
                    + (" with a draft model configured" if self.config.speculative else "")
                    + ": no draft token is ever accepted — likely a misconfiguration (e.g. an EAGLE-3 draft "
                    "run with --speculative-algorithm EAGLE, or wrong/missing eagle_aux_hidden_state_layer_ids)",
                    "configured": configured,
                }
            )
        if self.records and al.n < FEW:
            out.append(
                {
                    "code": "too_few_records",
                    "level": "info",
                    "message": f"only {al.n} accept len values: too few for a conclusion (want ≥ {FEW})",
                }
            )
        if self.records and al.n == 0 and self.all.accept_rate.n == 0 and self.all.accept_len_derived.n == 0:
            out.append(
                {
                    "code": "no_acceptance",
                    "level": "info",
                    "message": "metric lines carry no acceptance numbers (speculative decoding off?)",
                }
            )
        rd = self.rate_definition()
        if rd.note and self.all.accept_rate.n:
            out.append({"code": "rate_definition", "level": "info", "message": rd.note})
        return out

    def to_dict(self) -> dict:
        rd = self.rate_definition()
        tr = rates.normalise_transform(rd.drafts_per_step)
        d = {
            "index": self.index,
            "reason": self.reason,
            "label": self.label or self.config.label(),
            "start_line": self.start_line,
            "start_time": format_ts(self.start_ts),
            "first_record_time": format_ts(self.all.first_ts),
            "last_record_time": format_ts(self.all.last_ts),
            "config": self.config.summary_dict(),
            "records": self.records,
            "malformed": self.malformed,
            "rate_definition": rd.to_dict(),
        }
        d.update(self.all.to_dict(tr))
        if len(self.ranks) > 1:
            d["ranks"] = {k: v.to_dict(tr) for k, v in sorted(self.ranks.items())}
        d["diagnostics"] = self.diagnostics()
        return d


class SourceStats:
    """All statistics of one source: totals plus its segments."""

    def __init__(self, source: str, label: str | None = None) -> None:
        self.source = source
        self.label = label or source
        self.total = MetricSet()
        self.segments: deque[Segment] = deque(maxlen=MAX_SEGMENTS)
        self.segments.append(Segment(0, "start", None, None))
        self.records = 0
        self.malformed = 0
        self.malformed_examples: deque[tuple[int, str]] = deque(maxlen=20)
        self.markers = 0
        self.events: deque[SourceEvent] = deque(maxlen=200)

    @property
    def current(self) -> Segment:
        return self.segments[-1]

    @property
    def segment_index(self) -> int:
        return self.current.index

    def new_segment(
        self, reason: str, line_no: int | None = None, ts: float | None = None, label: str | None = None
    ) -> Segment:
        cur = self.current
        if cur.records == 0 and cur.malformed == 0:
            # Nothing measured yet in this one: it simply gets the new reason.
            cur.reason = reason if cur.reason == "start" or not cur.markers else cur.reason
            if label:
                cur.label = label
            if cur.start_line is None:
                cur.start_line, cur.start_ts = line_no, ts
            return cur
        seg = Segment(cur.index + 1, reason, line_no, ts, ServerConfig(family=cur.config.family), label)
        self.segments.append(seg)
        return seg

    def feed(self, items: Iterable[Item]) -> None:
        for it in items:
            if isinstance(it, Record):
                self.records += 1
                self.total.add(it)
                self.current.add(it)
            elif isinstance(it, Marker):
                self.on_marker(it)
            elif isinstance(it, Malformed):
                self.malformed += 1
                self.current.malformed += 1
                self.malformed_examples.append((it.line_no, it.reason))
            elif isinstance(it, EngineStats):
                pass

    def on_marker(self, m: Marker) -> None:
        self.markers += 1
        if m.continuation:
            self.current.config.update(m.family, m.config, m.version)
            self.current._rate_def = None  # the config it was read with changed
            return
        seg = self.new_segment(m.kind, m.line_no, m.timestamp)
        seg.markers.append(m.kind)
        seg.config.update(m.family, m.config, m.version)
        seg._rate_def = None

    def on_event(self, ev: SourceEvent) -> None:
        self.events.append(ev)
        if ev.opens_segment:
            label = None
            if ev.path and ev.kind.value in ("switched", "rotated"):
                label = ev.path.rsplit("/", 1)[-1]
            seg = self.new_segment(ev.kind.value, None, ev.time, label)
            seg.markers.append(ev.kind.value)

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "label": self.label,
            "records": self.records,
            "malformed": self.malformed,
            "malformed_examples": [{"line": n, "reason": r} for n, r in self.malformed_examples],
            **{
                k: v
                for k, v in self.total.to_dict().items()
                if k not in ("records", "accept_rate_normalized")
            },
            "segments": [s.to_dict() for s in self.segments],
        }
