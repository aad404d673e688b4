"""The typed result of ``specwatch summary``: what the command computes, as dataclasses.

The statistics build it (:meth:`Summary.of`, from their plain data); every renderer reads it — the
text, the Markdown, the JSON (:meth:`Summary.to_json`) — so each shows the same numbers.
The JSON carries ``"schema": SCHEMA`` and follows the JSON Schema that ``specwatch summary
--json-schema`` prints (:func:`json_schema`, made by pydantic from these classes; pydantic is
imported only there, so ``summary`` starts fast). A change of the JSON's meaning or shape raises
:data:`SCHEMA`.

Conventions: a field declared ``= None`` with :func:`optional` is left out of the JSON when it has
no value (the key is absent, as before the model); every other field is always there, ``null``
where nothing was measured (never a zero for a gap). Unknown keys are refused when the model is
built, so the model and the statistics cannot drift apart unnoticed.
"""

import dataclasses
import functools
import types
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union, cast, get_args, get_origin

SCHEMA = 1  # the JSON's version: raise it with any change of meaning or shape
_CONFIG = {"extra": "forbid"}  # pydantic's config for the schema (a plain dict: no import here)
# kw_only: optional fields anywhere; no generated repr/eq/match args and no slots: each costs code
# generated at import, and summary starts on every run (the model is read, never compared)
_MODEL = dataclass(kw_only=True, repr=False, eq=False, match_args=False)

T = TypeVar("T")


def optional() -> Any:
    """A field whose key is absent from the JSON when it has no value."""
    return field(default=None, metadata={"optional": True})


Interval = list[float | None]  # [low, high]; an end JSON cannot hold (inf) is null


# -- statistics of values ---------------------------------------------------------------------
@_MODEL
class Stat:
    """A series of printed (or derived) values: the mean with its interval, and more."""

    __pydantic_config__ = _CONFIG
    n: int
    mean: float | None
    weighted_mean: float | None
    weighted_n: int
    std: float | None
    ci95: Interval | None
    ci_method: str
    effective_n: float | None
    min: float | None
    max: float | None
    first: float | None
    last: float | None
    window_mean: float | None
    window_n: int
    ewma: float | None
    nonfinite: int
    out_of_range: int


@_MODEL
class PooledLen:
    """accept len pooled from counts: 1 + Σaccepted / Σdrafts."""

    __pydantic_config__ = _CONFIG
    value: float | None
    ci95: Interval | None
    accepted: float
    drafts: float
    n: int
    effective_n: float | None
    ci_method: str


@_MODEL
class PooledRate:
    """accept rate pooled from counts: Σaccepted / Σdrafted."""

    __pydantic_config__ = _CONFIG
    value: float | None
    ci95: Interval | None
    accepted: float
    drafted: float
    n: int
    effective_n: float | None
    ci_method: str


@_MODEL
class AcceptLen(Stat):
    """accept len: the printed values' series, and the pooled value where counts are printed."""

    pooled: PooledLen | None


@_MODEL
class AcceptRate(Stat):
    pooled: PooledRate | None


@_MODEL
class Tokens:
    """Printed accepted and drafted token counts, summed."""

    __pydantic_config__ = _CONFIG
    accepted: int
    drafted: int
    pooled_rate: float | None


@_MODEL
class SinceStart:
    """A value printed as a running total since the server started: the last one."""

    __pydantic_config__ = _CONFIG
    last: float
    since: str


@_MODEL
class Figures:
    """The statistics of one group of records (a rank of a segment)."""

    __pydantic_config__ = _CONFIG
    records: int
    accept_len: AcceptLen
    accept_rate: AcceptRate
    accept_rate_normalized: Stat | None
    throughput: Stat
    running_req: Stat
    accept_len_derived: Stat | None = optional()
    accept_rate_derived: Stat | None = optional()
    tokens: Tokens | None = optional()
    per_position: list[float] | None = optional()
    system_efficiency: SinceStart | None
    more: dict[str, Stat] | None = optional()  # quantities registered beyond the built-in ones


# -- segments -----------------------------------------------------------------------------------
@_MODEL
class RateDefinition:
    __pydantic_config__ = _CONFIG
    printed_definition: str | None
    drafts_per_step: int | None
    how_known: str
    pairs_checked: int
    pairs_consistent: int
    note: str


@_MODEL
class StratumMean:
    __pydantic_config__ = _CONFIG
    mean: float | None
    ci95: Interval | None
    effective_n: float | None
    estimator: str


@_MODEL
class Stratum:
    """accept len at one range of batch sizes (#running-req)."""

    __pydantic_config__ = _CONFIG
    running_req: list[int | None]
    n: int
    accept_len: StratumMean


@_MODEL
class Estimate:
    __pydantic_config__ = _CONFIG
    mean: float | None
    ci95: Interval | None
    n: int


@_MODEL
class Share:
    __pydantic_config__ = _CONFIG
    value: float | None
    ci95: Interval | None
    formula: str


@_MODEL
class Speculation:
    """What speculation gives: tokens/s generated, accepted and rejected, the drafts' share."""

    __pydantic_config__ = _CONFIG
    generation_throughput: Estimate
    accepted_tokens_per_s: Estimate
    rejected_tokens_per_s: Estimate
    draft_share: Share | None
    drafts_per_step: float | None


@_MODEL
class RefusedExample:
    __pydantic_config__ = _CONFIG
    line: int | None
    field: str
    value: str
    text: str | None


@_MODEL
class Diagnostic:
    """A finding about a segment; ``values_refused`` carries the refused counts, and
    ``accept_len_stuck_at_1`` whether a draft model was configured."""

    __pydantic_config__ = _CONFIG
    code: str
    level: str
    message: str
    configured: bool | None = optional()
    nonfinite: dict[str, int] | None = optional()
    out_of_range: dict[str, int] | None = optional()
    example: RefusedExample | None = optional()


@_MODEL
class Percentiles:
    __pydantic_config__ = _CONFIG
    mean: float | None
    p10: float | None
    p50: float | None
    p90: float | None


@_MODEL
class Histogram:
    __pydantic_config__ = _CONFIG
    lo: float
    width: float
    counts: list[int]


@_MODEL
class Requests:
    """Per-request acceptance (finished requests' lines)."""

    __pydantic_config__ = _CONFIG
    n: int
    accept_len: Percentiles
    step_histogram: list[int] | None
    histogram: Histogram
    exact_percentiles: bool
    refused: int


@_MODEL
class Segment:
    """One run of the server (between restarts or config changes)."""

    __pydantic_config__ = _CONFIG
    index: int
    reason: str
    label: str
    start_line: int | None
    start_time: str | None
    first_record_time: str | None
    last_record_time: str | None
    config: dict[str, Any]
    records: int
    malformed: int
    rate_definition: RateDefinition
    accept_len: AcceptLen
    accept_rate: AcceptRate
    accept_rate_normalized: Stat | None
    throughput: Stat
    running_req: Stat
    accept_len_derived: Stat | None = optional()
    accept_rate_derived: Stat | None = optional()
    tokens: Tokens | None = optional()
    per_position: list[float] | None
    system_efficiency: SinceStart | None
    more: dict[str, Stat] | None = optional()  # quantities registered beyond the built-in ones
    ranks: dict[str, Figures] | None
    by_batch_size: list[Stratum]
    speculation: Speculation
    diagnostics: list[Diagnostic]
    requests: Requests | None


# -- verdicts -------------------------------------------------------------------------------------
@_MODEL
class LoadWords:
    __pydantic_config__ = _CONFIG
    mean_running_req_a: float | None
    mean_running_req_b: float | None
    ratio: float | None
    note: str | None


@_MODEL
class StratumDiff:
    __pydantic_config__ = _CONFIG
    running_req: list[int | None]
    n_a: int
    n_b: int
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    weight: float | None


@_MODEL
class LoadAdjusted:
    """B − A of accept len at equal batch size (strata of #running-req)."""

    __pydantic_config__ = _CONFIG
    diff: float | None
    ci95: Interval | None
    verdict: str
    estimator: str
    reason: str
    n_a: int
    n_b: int
    excluded_a: int
    excluded_b: int
    strata: list[StratumDiff]
    load: LoadWords
    df: float | None = optional()


@_MODEL
class Verdict:
    """B − A of one quantity, with its interval and what it means."""

    __pydantic_config__ = _CONFIG
    diff: float | None
    ci95: Interval | None
    verdict: str
    estimator: str
    n_a: int
    n_b: int
    effective_n_a: float | None
    effective_n_b: float | None
    mean_a: float | None
    mean_b: float | None
    df: float | None
    reason: str
    definitions: list[str | None] | None = optional()
    note: str | None = optional()


@_MODEL
class SegmentVerdict(Verdict):
    """The last two segments of one source compared."""

    segments: list[int]
    accept_len_load_adjusted: LoadAdjusted


@_MODEL
class Ratio:
    """Generation throughput B / A (or spec / baseline)."""

    __pydantic_config__ = _CONFIG
    ratio: float | None
    ci95: Interval | None
    verdict: str
    baseline: str | None
    formula: str
    mean_a: float | None
    mean_b: float | None
    n_a: int
    n_b: int
    reason: str


@_MODEL
class Side:
    __pydantic_config__ = _CONFIG
    source: str
    label: str
    segment: int


@_MODEL
class Comparison:
    """Two sources: B − A."""

    __pydantic_config__ = _CONFIG
    a: Side
    b: Side
    accept_len: Verdict
    accept_len_load_adjusted: LoadAdjusted
    throughput: Ratio
    accept_rate: Verdict | None = optional()


# -- sources --------------------------------------------------------------------------------------
@_MODEL
class MalformedExample:
    __pydantic_config__ = _CONFIG
    line: int
    reason: str


@_MODEL
class Refused:
    """Values the checks left out of the statistics, by field."""

    __pydantic_config__ = _CONFIG
    nonfinite: dict[str, int]
    out_of_range: dict[str, int]
    example: RefusedExample | None


@_MODEL
class Elapsed:
    __pydantic_config__ = _CONFIG
    first: str
    last: str


@_MODEL
class OversizedExample:
    __pydantic_config__ = _CONFIG
    line: int
    offset: int
    bytes: int


@_MODEL
class Oversized:
    __pydantic_config__ = _CONFIG
    lines: int
    bytes: int
    largest: int
    examples: list[OversizedExample]


@_MODEL
class FileRead:
    """One file of a source, in the order read."""

    __pydantic_config__ = _CONFIG
    path: str
    compression: str | None
    file_bytes: int | None
    bytes: int
    problem: str | None


@_MODEL
class Window:
    __pydantic_config__ = _CONFIG
    since: str | None
    until: str | None
    skipped_bytes: int | None = optional()  # bytes before the window, not read
    search: str | None = optional()  # how its start was found ("binary", "stream")


@_MODEL
class Scraped:
    """What a metrics source adds: its scrapes and the server's totals since it started."""

    __pydantic_config__ = _CONFIG
    url: str
    where: str
    scrapes: int
    interval: float | None
    lifetime: dict[str, dict[str, Any]]
    error: str | None
    events: list[str]


@_MODEL
class Source:
    """One source read whole: its totals, its segments, what could not be read."""

    __pydantic_config__ = _CONFIG
    source: str
    label: str
    records: int
    malformed: int
    malformed_examples: list[MalformedExample]
    refused: Refused
    accept_len: AcceptLen
    accept_rate: AcceptRate
    throughput: Stat
    running_req: Stat
    accept_len_derived: Stat | None = optional()
    accept_rate_derived: Stat | None = optional()
    tokens: Tokens | None = optional()
    per_position: list[float] | None = optional()
    system_efficiency: SinceStart | None
    more: dict[str, Stat] | None = optional()  # quantities registered beyond the built-in ones
    segments: list[Segment]
    requests: Requests | None
    lines: int
    bytes: int
    family: str | None
    elapsed: Elapsed | None = optional()
    oversized: Oversized | None = optional()
    metrics: Scraped | None = optional()
    files: list[FileRead] | None
    window: Window | None
    segment_comparison: SegmentVerdict | None
    warnings: list[str]


@_MODEL
class Summary:
    """``specwatch summary``: every source, and B − A of two."""

    __pydantic_config__ = _CONFIG
    schema: int  # SCHEMA
    sources: list[Source]
    comparison: Comparison | None

    @classmethod
    def of(cls, sources: list[dict], comparison: dict | None) -> "Summary":
        """The model of the statistics' plain data (JSON-ready: NaN already made None)."""
        return build(cls, {"schema": SCHEMA, "sources": sources, "comparison": comparison})

    def to_json(self) -> dict[str, Any]:
        """The JSON object ``summary --json`` prints."""
        return plain(self)


# -- plain data <-> model -------------------------------------------------------------------------
@functools.cache
def _fields(cls: type) -> tuple[tuple[str, Any, bool], ...]:
    # the annotations are objects (no postponed evaluation here): no typing.get_type_hints, whose
    # evaluation of every annotation would cost summary's start more than the rest of the model
    return tuple((f.name, f.type, bool(f.metadata.get("optional"))) for f in dataclasses.fields(cls))


def build(cls: type[T], data: dict[str, Any]) -> T:
    """``cls`` from plain data: each field from its key (absent: an optional field's None), nested
    models built likewise; a key the model does not have is an error."""
    if not isinstance(data, dict):
        raise TypeError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    spec = _fields(cast("type", cls))
    known = {name for name, _, _ in spec}
    unknown = [k for k in data if k not in known]
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown keys {unknown}")
    kwargs = {name: _value(tp, data[name]) for name, tp, _ in spec if name in data}
    return cls(**kwargs)


def _value(tp: Any, v: Any) -> Any:
    if v is None:
        return None
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        models = [a for a in get_args(tp) if isinstance(a, type) and dataclasses.is_dataclass(a)]
        if models:
            return build(models[0], v)
        rest = [a for a in get_args(tp) if a is not type(None)]
        return _value(rest[0], v) if len(rest) == 1 else v
    if origin is list:
        (arg,) = get_args(tp)
        return [_value(arg, x) for x in v] if _needs_build(arg) else list(v)
    if origin is dict:
        _, arg = get_args(tp)
        return {k: _value(arg, x) for k, x in v.items()} if _needs_build(arg) else dict(v)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return build(tp, v)
    return v


@functools.cache
def _needs_build(tp: Any) -> bool:
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return True
    return any(_needs_build(a) for a in get_args(tp))


def plain(obj: Any) -> Any:
    """A model as plain JSON-ready data, its fields in order (an optional field without a value
    left out)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {}
        for name, _, opt in _fields(type(obj)):
            v = getattr(obj, name)
            if v is None and opt:
                continue
            out[name] = plain(v)
        return out
    if isinstance(obj, list):
        return [plain(x) for x in obj]
    if isinstance(obj, dict):
        return {k: plain(x) for k, x in obj.items()}
    return obj


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``summary --json``, made by pydantic from the model."""
    from pydantic import TypeAdapter

    schema = TypeAdapter(Summary).json_schema(mode="serialization")
    schema["properties"]["schema"] = {"const": SCHEMA, "description": "the version of this schema"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:specwatch:summary:{SCHEMA}",
        "title": "specwatch summary --json",
        "description": f'The JSON object `specwatch summary --json` prints; version {SCHEMA} (its "schema" key).',
        **{k: v for k, v in schema.items() if k not in ("title", "description")},
    }
