"""The typed result's statistics of values and its segments (see :mod:`tui.core.model.summary`)."""

from typing import Any

from tui.core.model.result_data import CONFIG, Interval, model, optional


# -- statistics of values ---------------------------------------------------------------------
@model
class Stat:
    """A series of printed (or derived) values: the mean with its interval, and more."""

    __pydantic_config__ = CONFIG
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


@model
class PooledLen:
    """accept len pooled from counts: 1 + Σaccepted / Σdrafts."""

    __pydantic_config__ = CONFIG
    value: float | None
    ci95: Interval | None
    accepted: float
    drafts: float
    n: int
    effective_n: float | None
    ci_method: str
    # how the drafts were counted where the log does not print them as such (stats/drafts.py)
    method: str | None = optional()


@model
class PooledRate:
    """accept rate pooled from counts: Σaccepted / Σdrafted."""

    __pydantic_config__ = CONFIG
    value: float | None
    ci95: Interval | None
    accepted: float
    drafted: float
    n: int
    effective_n: float | None
    ci_method: str


@model
class AcceptLen(Stat):
    """accept len: the printed values' series, and the pooled value where counts are printed."""

    pooled: PooledLen | None


@model
class AcceptRate(Stat):
    pooled: PooledRate | None


@model
class Tokens:
    """Printed accepted and drafted token counts, summed."""

    __pydantic_config__ = CONFIG
    accepted: int
    drafted: int
    pooled_rate: float | None


@model
class SinceStart:
    """A value printed as a running total since the server started: the last one."""

    __pydantic_config__ = CONFIG
    last: float
    since: str


@model
class Figures:
    """The statistics of one group of records (a rank of a segment)."""

    __pydantic_config__ = CONFIG
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
@model
class RateDefinition:
    __pydantic_config__ = CONFIG
    printed_definition: str | None
    drafts_per_step: int | None
    how_known: str
    pairs_checked: int
    pairs_consistent: int
    note: str


@model
class StratumMean:
    __pydantic_config__ = CONFIG
    mean: float | None
    ci95: Interval | None
    effective_n: float | None
    estimator: str


@model
class Stratum:
    """accept len at one range of batch sizes (#running-req)."""

    __pydantic_config__ = CONFIG
    running_req: list[int | None]
    n: int
    accept_len: StratumMean


@model
class Estimate:
    __pydantic_config__ = CONFIG
    mean: float | None
    ci95: Interval | None
    n: int


@model
class Share:
    __pydantic_config__ = CONFIG
    value: float | None
    ci95: Interval | None
    formula: str


@model
class Speculation:
    """What speculation gives: tokens/s generated, accepted and rejected, the drafts' share."""

    __pydantic_config__ = CONFIG
    generation_throughput: Estimate
    accepted_tokens_per_s: Estimate
    rejected_tokens_per_s: Estimate
    draft_share: Share | None
    drafts_per_step: float | None


@model
class RefusedExample:
    __pydantic_config__ = CONFIG
    line: int | None
    field: str
    value: str
    text: str | None


@model
class Diagnostic:
    """A finding about a segment; ``values_refused`` carries the refused counts,
    ``accept_len_stuck_at_1`` whether a draft model was configured, ``era_disagreement`` its
    counts."""

    __pydantic_config__ = CONFIG
    code: str
    level: str
    message: str
    configured: bool | None = optional()
    nonfinite: dict[str, int] | None = optional()
    out_of_range: dict[str, int] | None = optional()
    example: RefusedExample | None = optional()
    # era_disagreement (tui/core/stats/eras.py): the segment's era, what decided it, its lines with
    # evidence, those that disagree and those read before the era was settled
    era: str | None = optional()
    decided_by: str | None = optional()
    lines: int | None = optional()
    disagreeing: int | None = optional()
    read_before_settled: int | None = optional()


@model
class Percentiles:
    __pydantic_config__ = CONFIG
    mean: float | None
    p10: float | None
    p50: float | None
    p90: float | None


@model
class Histogram:
    __pydantic_config__ = CONFIG
    lo: float
    width: float
    counts: list[int]


@model
class Requests:
    """Per-request acceptance (finished requests' lines)."""

    __pydantic_config__ = CONFIG
    n: int
    accept_len: Percentiles
    step_histogram: list[int] | None
    histogram: Histogram
    exact_percentiles: bool
    refused: int


@model
class Segment:
    """One run of the server (between restarts or config changes)."""

    __pydantic_config__ = CONFIG
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
    synthetic: bool | None = optional()  # True: a synthetic acceptance run (benchmarking), not measured
