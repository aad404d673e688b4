"""The pydantic boundary form of :class:`tui.core.records.Record` (JSON output, validation)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class RecordModel(BaseModel):
    """The boundary form of :class:`Record` (JSON, validation)."""

    model_config = ConfigDict(extra="forbid")

    source: str
    line_no: int
    offset: int
    family: str
    kind: str
    timestamp: str | None = None
    rank: str | None = None
    accept_len: float | None = None
    accept_rate: float | None = None
    rate_definition: str | None = None
    accepted: int | None = None
    drafted: int | None = None
    num_drafts: float | None = None
    per_position: list[float] | None = None
    running_req: int | None = None
    tokens: int | None = None
    token_usage: float | None = None
    throughput: float | None = None
    queue_req: int | None = None
    graph: bool | None = None
    accept_len_derived: float | None = None
    accept_rate_derived: float | None = None
    cumulative: bool = False
    process: str | None = None
    extra: dict[str, str] = {}
    raw: str
