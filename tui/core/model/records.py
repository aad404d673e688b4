"""The typed items the parsers produce.

The hot path uses slotted dataclasses (cheap to build: pydantic per line costs 3-7x more);
:class:`tui.core.model.record_model.RecordModel` is the pydantic form used at the boundaries (JSON
output, validation of data coming from outside), derived from :class:`Record` and imported only
there so headless commands start fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tui.core.model.quantities import field_of, fields_of

# How the printed accept rate was computed (see docs/formats.md, "What the rate means"): the
# definition many families print; a family's own definitions are its data (family.toml's
# [rates], with their words: tui.core.formats.rate_definition.words).
RATE_DRAFTS = "accepted_drafts_over_proposed_drafts"
# How it is written for people (the app's numbers block, summary's tables).
RATE_DRAFTS_WORDS = "accepted/proposed drafts"
# Record.extra key of a record whose cumulative counters went back: a new server counting from
# zero (a restart with no startup line of its own): the statistics open a segment before it.
RESTART = "restart"


@dataclass(slots=True)
class Record:
    """One metric line of a family (what its plug-in or its declared shapes read off it).

    Every value is the one printed on the line (``accept_rate`` as a fraction: vLLM percentages
    are divided by 100); ``None`` means "not printed". Derived values live in fields whose names
    say so.
    """

    source: str
    line_no: int
    offset: int
    family: str
    # the family's kind of record (a declared shape's ``kind``: "decode", "spec", "timing", ...);
    # a family's ``request_kinds`` are finished requests, kept apart from the interval statistics
    kind: str
    raw: str
    timestamp: float | None = None  # naive wall-clock seconds (timegm of the printed local time)
    rank: str | None = None  # "TP0", "DP1 TP1", "engine 2"; "" = untagged; None = unknown
    accept_len: float | None = None
    accept_rate: float | None = None
    rate_definition: str | None = None
    accepted: int | None = None  # accepted draft tokens in the interval (no bonus token)
    drafted: int | None = None  # drafted tokens in the interval
    num_drafts: float | None = None  # verify steps x requests in the interval, when derivable
    per_position: tuple[float, ...] | None = None
    running_req: int | None = None
    tokens: int | None = None
    token_usage: float | None = None
    throughput: float | None = None  # generation throughput, tokens/s
    queue_req: int | None = None
    graph: bool | None = None
    accept_len_derived: float | None = None  # vLLM V0: emitted / (drafted / k), interval
    accept_rate_derived: float | None = None  # vLLM V0: interval accepted / drafted
    cumulative: bool = False  # the printed values are running totals since start (vLLM V0)
    accepted_throughput: float | None = None  # vLLM V1: accepted draft tokens/s in the interval
    drafted_throughput: float | None = None  # vLLM V1: drafted tokens/s in the interval
    system_efficiency: float | None = None  # vLLM V0: emitted / (steps x (k+1)), cumulative, as printed
    gen_drafts: int | None = None  # llama.cpp statistics: drafts generated (Δ of the cumulative count)
    acc_drafts: int | None = None  # llama.cpp statistics: drafts with a token accepted (Δ)
    graphs_reused: int | None = None  # llama.cpp print_timing: compute graphs reused
    process: str | None = None  # vLLM process tag, e.g. "APIServer pid=1"
    elapsed: float | None = None  # seconds since the server started (llama.cpp's prefix), not a date
    extra: dict[str, str] = field(default_factory=dict)
    # kind "request": verify steps that accepted 0, 1, ..., k drafts (SGLang spec_accept_histogram)
    step_histogram: tuple[int, ...] | None = None
    # the values of quantities registered beyond the built-in fields (tui.core.model.quantities:
    # a family's own, or a test's), by name; None: none printed
    more: dict[str, float] | None = None

    def as_dict(self) -> dict[str, Any]:
        """The fields of :class:`RecordModel` as plain JSON-ready data, without pydantic's cost
        (the hot path of ``stream --jsonl``; tests check it validates as a RecordModel)."""
        data = {name: getattr(self, name) for name in self.__slots__}
        data["timestamp"] = format_ts(self.timestamp)
        data["per_position"] = list(self.per_position) if self.per_position is not None else None
        data["extra"] = dict(self.extra)
        data["step_histogram"] = list(self.step_histogram) if self.step_histogram is not None else None
        if self.more is None and fields_of(self.family):
            self.fill_more()
        data["more"] = dict(self.more) if self.more is not None else None
        return data

    def value(self, name: str) -> float | int | None:
        """The value of quantity ``name``: a field, or one of :attr:`more` — read off the line by
        the family's declared field (:func:`tui.core.model.quantities.register_field`) the first
        time it is asked for."""
        if name in _FIELDS:
            return getattr(self, name)
        more = self.more
        if more is not None and name in more:
            return more[name]
        f = field_of(self.family, name)
        if f is None or (f.kind is not None and f.kind != self.kind):
            return None
        x = f.read(self.raw)
        if x is not None:
            self.more = {**(more or {}), name: x}
        return x

    def fill_more(self) -> None:
        """Read every declared field of the record's family into :attr:`more` (for its JSON)."""
        for f in fields_of(self.family):
            self.value(f.quantity)


_FIELDS = frozenset(Record.__slots__)


@dataclass(slots=True)
class Marker:
    """A startup / restart marker: opens a new segment (or completes the pending one).

    ``config`` holds the server arguments read from the line (raw strings and simple values);
    ``continuation`` is True for text that continues an args dump started on an earlier line.
    """

    source: str
    line_no: int
    offset: int
    family: str | None
    kind: str  # "server_args", "args_dict", "ready", "uvicorn_start", "version", "non_default_args", "engine_init"
    raw: str
    timestamp: float | None = None
    config: dict[str, Any] = field(default_factory=dict)
    version: str | None = None
    continuation: bool = False


@dataclass(slots=True)
class Malformed:
    """A line that looks like a metric line but cannot be read."""

    source: str
    line_no: int
    offset: int
    reason: str
    raw: str


@dataclass(slots=True)
class EngineStats:
    """A vLLM ``Engine NNN:`` (or V0 stats) line: throughput and queue numbers, no acceptance."""

    source: str
    line_no: int
    offset: int
    engine: int | None
    timestamp: float | None
    throughput: float | None
    running_req: int | None
    waiting_req: int | None
    kv_usage: float | None
    process: str | None = None


@dataclass(slots=True)
class Oversized:
    """A line longer than a line may be (``MAX_LINE_BYTES``): not read, only its length kept."""

    source: str
    line_no: int
    offset: int
    nbytes: int


Item = Record | Marker | Malformed | EngineStats | Oversized


def format_ts(ts: float | None) -> str | None:
    """Naive wall-clock seconds to ISO text (no zone: the servers print local time)."""
    if ts is None:
        return None
    try:
        dt = datetime.fromtimestamp(ts, tz=UTC).replace(tzinfo=None)
    except (OverflowError, OSError, ValueError):
        return None
    return dt.isoformat(sep=" ", timespec="milliseconds" if ts % 1 else "seconds")


def metrics_item(source: str, line_no: int, offset: int, line: str, default_family: str) -> Record | Marker:
    """A record (or a restart marker) sent by a metrics source as one JSON line.

    ``{"marker": "counter_reset", ...}`` is a restart seen as counters going back; anything else
    holds :class:`Record` fields (``family`` missing: ``default_family``). The record's ``raw`` is the
    JSON line itself.
    """
    import json

    data = json.loads(line)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    ts = data.get("timestamp")
    if ts is not None and not isinstance(ts, (int, float)):
        raise ValueError("timestamp must be seconds")
    if "marker" in data:
        return Marker(
            source,
            line_no,
            offset,
            data.get("family"),
            str(data["marker"]),
            line,
            ts,
            dict(data.get("config") or {}),
            data.get("version"),
        )
    allowed = set(Record.__slots__) - {"source", "line_no", "offset", "raw", "kind"}
    unknown = set(data) - allowed
    if unknown:
        raise ValueError(f"unknown fields {sorted(unknown)}")
    fields = dict(data)
    if fields.get("per_position") is not None:
        fields["per_position"] = tuple(float(v) for v in fields["per_position"])
    fields.setdefault("family", default_family)
    return Record(source=source, line_no=line_no, offset=offset, kind="metrics", raw=line, **fields)
