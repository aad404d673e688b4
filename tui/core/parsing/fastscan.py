"""Whole-buffer fast path for large SGLang logs.

:func:`scan_chunk` looks at a buffer of complete lines at once. When every metric line in it is
a canonical modern SGLang ``Decode batch`` line (the form of 2025-10 onwards, with accept len,
accept rate, graph flag, throughput and queue, full-date timestamp) and nothing else in it needs
the line parser (no startup marker, no other family, no malformed look-alike), it returns the
values as columns, computed by one ``findall`` and C-level conversions. Otherwise it returns
``None`` and the caller parses the buffer line by line with :class:`LineParser`.

This is exact, not heuristic: the buffer qualifies only if no ``Decode batch`` is left outside
the canonical matches (nor any other text the line parser would act on), and every match has
the canonical ``[date time TAGS] `` prefix at its line start, so no line can be skipped or read
differently from the line parser (tests compare both on the same input).
"""

from __future__ import annotations

import calendar
import re
from array import array
from dataclasses import dataclass

from tui.core.stats.metrics import Columns

try:  # the optional native scanner (setup.py); same answers, several times faster
    from tui.core.parsing import _fastscan as _native  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - depends on the build
    _native = None

# The values of a canonical decode line, from its anchor to its newline (a literal start lets
# the regex engine skip quickly to each anchor).
_VALUES = re.compile(
    rb"Decode batch[,.] #running-req: (\d+), #token: \d+, token usage: \d+\.\d+, "
    rb"accept len: (\d+\.\d+), accept rate: (\d+\.\d+), (?:cuda|npu|cpu) graph: (?:True|False), "
    rb"gen throughput \(token/s\): (\d+\.\d+), #queue-req: \d+(?:, ?)?\r?\n"
)
# Its prefix: a full-date SGLang timestamp at the start of the line, then rank tags.
_PREFIX = re.compile(rb"\n\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d([^\]\n]*)\] Decode batch")
_FIRST_PREFIX = re.compile(rb"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d([^\]\n]*)\] Decode batch")
_TAGS = re.compile(rb"(?: [A-Z][A-Z_]*\d+)*")
_TS = re.compile(rb"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
# Anything the line parser must see in the lines that are not canonical decode lines: startup
# markers, the other families, and decode lines the fast pattern did not take.
_BLOCKERS = (
    b"Decode batch",
    b"'",
    b"ready to roll",
    b"Started server",
    b"vLLM API",
    b"metrics:",
    b"Avg prompt",
    b"draft acceptance",
    b"LLM engine",
)
_GROUPS = 4


@dataclass(slots=True)
class FastChunk:
    """Columns of the decode records of one buffer, in line order, and per rank tag."""

    lines: int
    records: int
    cols: Columns | None  # no longer built: the statistics take ``values`` as RecordColumns
    by_rank: dict[str, Columns | None]  # the rank tags seen (values None, as ``cols``)
    first_ts: float | None
    last_ts: float | None
    pairs: list[tuple[float, float]]  # first (accept len, accept rate) pairs, for rate inference
    # the values themselves: (#running-req, accept len, accept rate, throughput, rank tag per record
    # or one tag for all), for the statistics' RecordColumns entry point
    values: tuple | None = None
    columns: object = None  # the same as RecordColumns, when built (and precomputed) by a worker


def _ts(text: bytes) -> float:
    y, mo, d = int(text[0:4]), int(text[5:7]), int(text[8:10])
    h, mi, s = int(text[11:13]), int(text[14:16]), int(text[17:19])
    return float(calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)))


def _floats(col: list[bytes]) -> list[float]:
    """float() of each value; few distinct values (accept len, rates, batch sizes) are
    converted once each."""
    distinct = set(col)
    if len(distinct) * 4 < len(col):
        table = {k: float(k) for k in distinct}
        return list(map(table.__getitem__, col))
    return list(map(float, col))


def scan_chunk(buf: bytes) -> FastChunk | None:
    """``buf`` must hold whole lines (end with a newline)."""
    if _native is not None:
        r = _native.scan(buf)
        if r is None:
            return None
        if r is not False:  # False: canonical so far, several rank tags: the Python path below
            return _from_native(r)
    return _scan_python(buf)


def _from_native(r: tuple) -> FastChunk:
    n_lines, n, tags, first, last, *raw = r
    if n == 0:
        return FastChunk(n_lines, 0, None, {}, None, None, [])
    run, al, ar, tp = (_doubles(b) for b in raw)
    pairs = list(zip(al[:200], ar[:200]))
    tag = tags.decode().strip()
    return FastChunk(n_lines, n, None, {tag: None}, _ts(first), _ts(last), pairs, (run, al, ar, tp, tag))


def _doubles(b: bytes) -> array:
    a = array("d")
    a.frombytes(b)
    return a


def _scan_python(buf: bytes) -> FastChunk | None:
    parts = _VALUES.split(buf)
    step = _GROUPS + 1
    n = (len(parts) - 1) // step
    # A decode line the pattern did not take stays in the rest: "Decode batch" is a blocker.
    rest = b"".join(parts[0::step]) if n else buf
    for b in _BLOCKERS:
        if b in rest:
            return None
    n_lines = rest.count(b"\n") + n  # each decode match took its own newline
    if n == 0:
        return FastChunk(n_lines, 0, None, {}, None, None, [])
    tags = _PREFIX.findall(buf)
    first = _FIRST_PREFIX.match(buf)
    if first is not None:
        tags.insert(0, first.group(1))
    if len(tags) != n:
        return None  # a decode line without the canonical "[date time TAGS] " prefix
    distinct = set(tags)
    if not all(_TAGS.fullmatch(t) for t in distinct):
        return None
    m_first = _TS.search(buf, buf.rfind(b"\n", 0, buf.find(b"Decode batch")) + 1)
    m_last = _TS.search(buf, buf.rfind(b"\n", 0, buf.rfind(b"Decode batch")) + 1)
    if m_first is None or m_last is None:
        return None
    try:
        first_ts, last_ts = _ts(m_first.group(1)), _ts(m_last.group(1))
    except (ValueError, OverflowError):
        return None
    run, al, ar = (_floats(parts[i::step]) for i in (1, 2, 3))
    tp = list(map(float, parts[4::step]))  # throughput: nearly every value differs
    by_rank: dict[str, Columns | None]
    if len(distinct) == 1:
        by_rank = {next(iter(distinct)).decode().strip(): None}
    else:
        by_rank = {r.decode().strip(): None for r in distinct}
    pairs = list(zip(al[:200], ar[:200]))
    rank_tags = next(iter(by_rank)) if len(distinct) == 1 else [t.decode().strip() for t in tags]
    return FastChunk(n_lines, n, None, by_rank, first_ts, last_ts, pairs, (run, al, ar, tp, rank_tags))
