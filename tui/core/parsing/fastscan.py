"""Whole-buffer fast path for large SGLang logs.

:func:`scan_chunk` looks at a buffer of complete lines at once. When every metric line in it is
a canonical modern SGLang ``Decode batch`` line (the form of 2025-10 onwards, with accept len,
accept rate, graph flag, throughput and queue, full-date timestamp) and nothing else in it needs
the line parser (no startup marker, no other family, no malformed look-alike), it returns the
values as columns, computed by one ``findall`` and C-level conversions. Otherwise it returns
``None`` and the caller parses the buffer line by line with :class:`LineParser`.

The count check makes this exact, not heuristic: the buffer qualifies only if the number of
canonical matches equals the number of ``Decode batch`` occurrences, so no line can be
skipped or read differently from the line parser (tests compare both on the same input).
"""

from __future__ import annotations

import calendar
import re
from array import array
from dataclasses import dataclass

_DECODE = re.compile(
    rb"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)((?: [A-Z][A-Z_]*\d+)*)\] Decode batch[,.] "
    rb"#running-req: (\d+), #token: \d+, token usage: \d+\.\d+, "
    rb"accept len: (\d+\.\d+), accept rate: (\d+\.\d+), (?:cuda|npu|cpu) graph: (?:True|False), "
    rb"gen throughput \(token/s\): (\d+\.\d+), #queue-req: \d+(?:, ?)?\r?\n"
)
# Anything the line parser must see (markers, other families, escapes it would clean away).
_BLOCKERS = (b"server_args", b"ready to roll", b"Started server", b"metrics:", b"Engine 0",
             b"draft acceptance", b"vLLM", b"': ", b"\x1b", b"\xef\xbf\xbd", b"`", b"**", b"\x00",
             b"Avg prompt")


Columns = tuple[array, array, array, array]  # accept len, accept rate, throughput, running-req


@dataclass(slots=True)
class FastChunk:
    """Columns of the decode records of one buffer, in line order, and per rank tag."""

    lines: int
    records: int
    cols: Columns | None
    by_rank: dict[str, Columns]
    first_ts: float | None
    last_ts: float | None
    pairs: list[tuple[float, float]]  # first (accept len, accept rate) pairs, for rate inference


def _ts(text: bytes) -> float:
    y, mo, d = int(text[0:4]), int(text[5:7]), int(text[8:10])
    h, mi, s = int(text[11:13]), int(text[14:16]), int(text[17:19])
    return float(calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)))


def scan_chunk(buf: bytes) -> FastChunk | None:
    """``buf`` must hold whole lines (end with a newline)."""
    for b in _BLOCKERS:
        if b in buf:
            return None
    n_anchor = buf.count(b"Decode batch")
    n_lines = buf.count(b"\n")
    if n_anchor == 0:
        # Nothing to read here unless the line parser would find something: Prefill lines,
        # access logs and the like are not records.
        if b"batch" in buf and b"Decode" in buf:
            return None
        return FastChunk(n_lines, 0, None, {}, None, None, [])
    rows = _DECODE.findall(buf)
    if len(rows) != n_anchor:
        return None
    ts_col, rank_col, run_col, al_col, ar_col, tp_col = zip(*rows)
    try:
        first_ts, last_ts = _ts(ts_col[0]), _ts(ts_col[-1])
    except (ValueError, OverflowError):
        return None
    cols = (array("d", map(float, al_col)), array("d", map(float, ar_col)),
            array("d", map(float, tp_col)), array("d", map(float, run_col)))
    ranks = set(rank_col)
    if len(ranks) == 1:
        by_rank = {next(iter(ranks)).decode().strip(): cols}
    else:
        groups: dict[bytes, list[int]] = {}
        for i, r in enumerate(rank_col):
            groups.setdefault(r, []).append(i)
        by_rank = {r.decode().strip(): tuple(array("d", (c[i] for i in idx)) for c in cols)  # type: ignore[misc]
                   for r, idx in groups.items()}
    pairs = [(float(a), float(b)) for a, b in zip(al_col[:200], ar_col[:200])]
    return FastChunk(n_lines, len(rows), cols, by_rank, first_ts, last_ts, pairs)
