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

from typing import Any

from tui.core.model.result_data import CONFIG, Interval, build, model, optional, plain
from tui.core.model.summary_segments import (
    AcceptLen,
    AcceptRate,
    Diagnostic,
    Figures,
    PooledLen,
    PooledRate,
    RefusedExample,
    Requests,
    Segment,
    SinceStart,
    Stat,
    Stratum,
    Tokens,
)

__all__ = [
    "SCHEMA",
    "AcceptLen",
    "AcceptRate",
    "Comparison",
    "Diagnostic",
    "Figures",
    "Interval",
    "LoadAdjusted",
    "PooledLen",
    "PooledRate",
    "Ratio",
    "RefusedExample",
    "Requests",
    "Scraped",
    "Segment",
    "SegmentVerdict",
    "SinceStart",
    "Source",
    "Stat",
    "Stratum",
    "Summary",
    "Tokens",
    "Verdict",
    "build",
    "json_schema",
    "plain",
]

SCHEMA = 1  # the JSON's version: raise it with any change of meaning or shape


# -- verdicts -------------------------------------------------------------------------------------
@model
class LoadWords:
    __pydantic_config__ = CONFIG
    mean_running_req_a: float | None
    mean_running_req_b: float | None
    ratio: float | None
    note: str | None


@model
class StratumDiff:
    __pydantic_config__ = CONFIG
    running_req: list[int | None]
    n_a: int
    n_b: int
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    weight: float | None


@model
class LoadAdjusted:
    """B − A of accept len at equal batch size (strata of #running-req)."""

    __pydantic_config__ = CONFIG
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


@model
class Verdict:
    """B − A of one quantity, with its interval and what it means."""

    __pydantic_config__ = CONFIG
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


@model
class SegmentVerdict(Verdict):
    """The last two segments of one source compared."""

    segments: list[int]
    accept_len_load_adjusted: LoadAdjusted


@model
class Ratio:
    """Generation throughput B / A (or spec / baseline)."""

    __pydantic_config__ = CONFIG
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


@model
class Side:
    __pydantic_config__ = CONFIG
    source: str
    label: str
    segment: int


@model
class Comparison:
    """Two sources: B − A."""

    __pydantic_config__ = CONFIG
    a: Side
    b: Side
    accept_len: Verdict
    accept_len_load_adjusted: LoadAdjusted
    throughput: Ratio
    accept_rate: Verdict | None = optional()


# -- sources --------------------------------------------------------------------------------------
@model
class MalformedExample:
    __pydantic_config__ = CONFIG
    line: int
    reason: str


@model
class Refused:
    """Values the checks left out of the statistics, by field."""

    __pydantic_config__ = CONFIG
    nonfinite: dict[str, int]
    out_of_range: dict[str, int]
    example: RefusedExample | None


@model
class Elapsed:
    __pydantic_config__ = CONFIG
    first: str
    last: str


@model
class OversizedExample:
    __pydantic_config__ = CONFIG
    line: int
    offset: int
    bytes: int


@model
class Oversized:
    __pydantic_config__ = CONFIG
    lines: int
    bytes: int
    largest: int
    examples: list[OversizedExample]


@model
class FileRead:
    """One file of a source, in the order read."""

    __pydantic_config__ = CONFIG
    path: str
    compression: str | None
    file_bytes: int | None
    bytes: int
    problem: str | None


@model
class Window:
    __pydantic_config__ = CONFIG
    since: str | None
    until: str | None
    skipped_bytes: int | None = optional()  # bytes before the window, not read
    search: str | None = optional()  # how its start was found ("binary", "stream", "in order")
    context_bytes: int | None = optional()  # the segment's startup lines read before it, for its config
    log_first: str | None = optional()  # the log's first and last stamps (said when the window is empty)
    log_last: str | None = optional()


@model
class Scraped:
    """What a metrics source adds: its scrapes and the server's totals since it started."""

    __pydantic_config__ = CONFIG
    url: str
    where: str
    scrapes: int
    interval: float | None
    lifetime: dict[str, dict[str, Any]]
    error: str | None
    events: list[str]


@model
class Source:
    """One source read whole: its totals, its segments, what could not be read."""

    __pydantic_config__ = CONFIG
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
    synthetic: bool | None = optional()  # True: a segment ran a synthetic acceptance mode


@model
class Summary:
    """``specwatch summary``: every source, and B − A of two."""

    __pydantic_config__ = CONFIG
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
