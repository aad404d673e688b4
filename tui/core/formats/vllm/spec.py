"""vLLM: ``SpecDecoding metrics`` (V1, four formats), ``Speculative metrics`` (V0 and the first
V1 form) and ``Engine NNN:`` stats lines (docs/formats.md, "vLLM").

Fields are split at ``, `` followed by a capitalised ``Key: `` — never on every comma, since the
per-position list uses the same separator. The keys read are the grammar's tables.
"""

from __future__ import annotations

import re
from typing import Any

from tui.core.formats import shapes
from tui.core.formats.text import first_number, process_of, to_float, to_int
from tui.core.formats.vllm import grammar
from tui.core.formats.vllm.rates import RATE_VLLM_V0_CUMULATIVE
from tui.core.model.records import (
    RATE_DRAFTS,
    RESTART,
    EngineStats,
    Malformed,
    Record,
)

SPEC_ANCHOR = grammar.SPEC
V0_ANCHOR = grammar.SPEC_V0
ENGINE_ANCHOR = grammar.ENGINE_LEAD
_SPEC_KEYS = grammar.SPEC_FIELDS

# vLLM < 0.9 printed "Mean acceptance length" as accepted / drafts, without the bonus token; vLLM PR
# #17908 (0.9.0) added it. The text of the line is the same: the era is the segment's, decided
# from its version line or the weight of its lines' evidence (family.toml [[eras]], stats/eras.py).

_SPLIT = re.compile(r",\s+(?=[A-Z][A-Za-z /()\-]*: )")
_ENGINE = re.compile(r"Engine (\d+): ")


def split_fields(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in _SPLIT.split(body.strip().rstrip(".").rstrip(",")):
        key, sep, value = part.partition(": ")
        if sep:
            out[key.strip()] = value.strip().rstrip(",").strip()
    return out


def _percent(text: str, v: float) -> float:
    """``76.7%`` → 0.767 exactly as printed (no 0.7670000000000001 from the division)."""
    digits = text.rstrip("%").strip()
    dec = len(digits) - digits.find(".") - 1 if "." in digits else 0
    return round(v / 100.0, dec + 2) if v == v and abs(v) != float("inf") else v


def _per_position(value: str) -> tuple[float, ...] | None:
    vals = []
    for piece in value.split(","):
        f = to_float(piece)
        if f is None:
            return None
        vals.append(f)
    return tuple(vals) if vals else None


class VllmState:
    """What a vLLM line needs from the lines before it, per process tag: the ``Engine NNN``
    line printed just before a spec line (its engine index and throughput), and the previous
    V0 cumulative counters (to take differences); and the ``vllm bench serve`` block being read
    (:mod:`tui.core.formats.vllm.bench`)."""

    __slots__ = ("bench", "pending_engine", "v0_prev")

    def __init__(self) -> None:
        self.pending_engine: dict[str | None, EngineStats] = {}
        self.v0_prev: dict[str | None, tuple[int, int, int]] = {}
        self.bench: Any = None  # a BenchBlock being read

    def reset(self) -> None:
        self.pending_engine.clear()
        self.v0_prev.clear()
        self.bench = None


def parse_engine(
    source: str, line_no: int, offset: int, text: str, at: int, ts: float | None, state: VllmState
) -> EngineStats | None:
    m = _ENGINE.match(text, at)
    engine = int(m.group(1)) if m else None
    body = text[m.end() :] if m else text[at:]
    f = split_fields(body)
    if "Avg generation throughput" not in f:
        return None
    proc = process_of(text[:at])
    kv = f.get("GPU KV cache usage")
    es = EngineStats(
        source=source,
        line_no=line_no,
        offset=offset,
        engine=engine,
        timestamp=ts,
        throughput=to_float(first_number(f["Avg generation throughput"])),
        running_req=to_int(first_number(f.get("Running", ""))),
        waiting_req=to_int(first_number(f.get("Waiting", f.get("Pending", "")))),
        kv_usage=_kv_fraction(kv),
        process=proc,
    )
    state.pending_engine[proc] = es
    return es


def _kv_fraction(kv: str | None) -> float | None:
    v = to_float(kv) if kv else None
    return v / 100.0 if v is not None else None


def parse_spec(
    source: str, line_no: int, offset: int, text: str, at: int, anchor: str, raw: str, state: VllmState
) -> Record | Malformed:
    body = text[at + len(anchor) :]
    f = split_fields(body)
    if not f:
        return Malformed(source, line_no, offset, f"{anchor} line with no readable field", raw)
    proc = process_of(text[:at])
    v0 = anchor == V0_ANCHOR and (
        "System efficiency" in f or any(k.startswith("Number of emitted") for k in f)
    )
    rec = Record(
        source=source,
        line_no=line_no,
        offset=offset,
        family="vllm",
        kind="spec_v0" if v0 else "spec",
        raw=raw,
        process=proc,
    )
    engine = state.pending_engine.pop(proc, None)
    if engine is not None:
        rec.rank = f"engine {engine.engine}" if engine.engine is not None else None
        rec.throughput = engine.throughput
        rec.running_req = engine.running_req
    bad: list[str] = []
    for key, value in f.items():
        spec = _SPEC_KEYS.get(key)
        if spec is None:
            rec.extra[key] = value
            continue
        attr, kind = spec
        if attr == "per_position":
            rec.per_position = _per_position(value)
            ok = rec.per_position is not None
        elif kind == shapes.INT:
            num = to_int(first_number(value))
            setattr(rec, attr, num)
            ok = num is not None
        else:
            v = to_float(value)
            ok = v is not None
            if v is not None and kind == shapes.PERCENT and value.endswith("%"):
                v = _percent(value, v)
            setattr(rec, attr, v)
        if not ok:
            bad.append(key)
    if bad:
        return Malformed(source, line_no, offset, f"bad value for {', '.join(map(repr, bad))}", raw)
    if rec.accept_len is None and rec.accept_rate is None and rec.accepted is None:
        return Malformed(source, line_no, offset, f"{anchor} line without acceptance fields", raw)
    if v0:
        _v0_intervals(rec, f, state)
    else:
        _throughputs(rec, f)
        rec.rate_definition = RATE_DRAFTS if rec.accept_rate is not None else None
        k = len(rec.per_position) if rec.per_position else None
        if k and rec.drafted is not None:
            rec.num_drafts = rec.drafted / k
    return rec


def _throughputs(rec: Record, f: dict[str, str]) -> None:
    """The V1 throughputs as numbers (the printed length is kept as printed: its era is the
    segment's, stats/eras.py)."""
    for key, attr in (
        ("Accepted throughput", "accepted_throughput"),
        ("Drafted throughput", "drafted_throughput"),
    ):
        if key in f:
            setattr(rec, attr, to_float(first_number(f[key])))


def _v0_intervals(rec: Record, f: dict[str, str], state: VllmState) -> None:
    """V0 counters are cumulative since start: derive the interval values by difference."""
    rec.cumulative = True
    rec.rate_definition = RATE_VLLM_V0_CUMULATIVE
    if "System efficiency" in f:  # emitted / (steps x (k+1)), cumulative like the rest
        rec.system_efficiency = to_float(f["System efficiency"])
    k = to_int(f.get("Number of speculative tokens", ""))
    emitted = None
    for key, value in f.items():
        if key.startswith("Number of emitted tokens"):
            emitted = to_int(first_number(value))
    acc, drafted = rec.accepted, rec.drafted
    if k is None or emitted is None or acc is None or drafted is None:
        return
    rec.extra["k"] = str(k)
    prev = state.v0_prev.get(rec.process)
    state.v0_prev[rec.process] = (acc, drafted, emitted)
    if prev is not None and drafted >= prev[1] and acc >= prev[0] and emitted >= prev[2]:
        d_acc, d_draft, d_emit = acc - prev[0], drafted - prev[1], emitted - prev[2]
    else:  # first line, or counters went back (a restart)
        d_acc, d_draft, d_emit = acc, drafted, emitted
        if prev is not None:
            rec.extra[RESTART] = "vLLM V0 counters went back"
    if d_draft > 0 and k > 0:
        rec.num_drafts = d_draft / k
        rec.accept_len_derived = d_emit / (d_draft / k)
        rec.accept_rate_derived = d_acc / d_draft
