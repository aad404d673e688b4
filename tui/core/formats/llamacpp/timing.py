"""llama.cpp server: the per-request ``print_timing`` draft line (docs/formats.md, "llama.cpp").

New form (PR #24536): ``draft acceptance = 0.64479 (  167 accepted /   259 generated),
mean acceptance length =  2.92, acceptance rate per position = (0.805, 0.632, 0.483)``; merged
form: ``draft acceptance = 0.66471 (  226 accepted /   340 generated), mean len =  2.88``;
old form: ``draft acceptance rate = 0.64479 (  167 accepted /   259 generated)``.
"""

from __future__ import annotations

import re

from tui.core.formats.llamacpp.grammar import TIMING
from tui.core.formats.text import to_float
from tui.core.model.records import RATE_DRAFTS, Malformed, Record

ANCHOR = TIMING

_LINE = re.compile(
    r"draft acceptance(?: rate)? = *(\S+) *\( *(\d+) accepted */ *(\d+) generated\)"
    r"(?:, mean (?:acceptance length|len) = *(\S+?),?(?:\s|$))?"
    r"(?:.*?acceptance rate per position = \(([^)]*)\))?"
)
_SLOT = re.compile(r"id +(\d+)")


def parse_timing(
    source: str, line_no: int, offset: int, text: str, at: int, raw: str
) -> Record | Malformed | None:
    m = _LINE.match(text, at)
    if m is None:
        if "=" in text[at : at + 40]:
            return Malformed(source, line_no, offset, "draft acceptance line not in a known form", raw)
        return None
    rate = to_float(m.group(1))
    if rate is None:
        return Malformed(source, line_no, offset, f"bad draft acceptance value {m.group(1)!r}", raw)
    rec = Record(
        source=source,
        line_no=line_no,
        offset=offset,
        family="llamacpp",
        kind="timing",
        raw=raw,
        accept_rate=rate,
        rate_definition=RATE_DRAFTS,
        accepted=int(m.group(2)),
        drafted=int(m.group(3)),
    )
    if m.group(4) is not None:
        rec.accept_len = to_float(m.group(4))
        if rec.accept_len is None:
            return Malformed(source, line_no, offset, f"bad mean acceptance length {m.group(4)!r}", raw)
    if m.group(5):
        vals = [to_float(v) for v in m.group(5).split(",")]
        if all(v is not None for v in vals):
            rec.per_position = tuple(vals)  # type: ignore[arg-type]
    slot = _SLOT.search(text, 0, at)
    if slot:  # a request slot, not a rank: kept as information only
        rec.extra["slot"] = slot.group(1)
    return rec
