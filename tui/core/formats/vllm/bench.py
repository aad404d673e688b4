"""``vllm bench serve``: the "Speculative Decoding" block of its result printout (docs/formats.md,
"vLLM bench serve").

``---------------Speculative Decoding---------------`` then ``Acceptance rate (%):`` (a percent),
``Acceptance length:``, ``Drafts:``, ``Draft tokens:``, ``Accepted tokens:``, optionally
``Per-position acceptance (%):`` and ``  Position i:`` lines, closed by 50 ``=``. Every value is
left-aligned in 10 columns (trailing spaces). The numbers are differences of the server's
counters over the run: one pooled record (kind "bench") with the printed values.
"""

from __future__ import annotations

import re

from tui.core.formats.text import to_float
from tui.core.formats.vllm.grammar import BENCH
from tui.core.model.records import RATE_DRAFTS, Malformed, Record

ANCHOR = BENCH
MAX_BLOCK = 80  # lines: a block that does not close by then is abandoned

_KEYS = {
    "Acceptance rate (%)": "rate",
    "Acceptance length": "al",
    "Drafts": "drafts",
    "Draft tokens": "draft_tokens",
    "Accepted tokens": "accepted",
}
_KV = re.compile(r"^\s*([A-Za-z][A-Za-z ()%\-]*?|Position \d+):\s*(\S*)\s*$")


class BenchBlock:
    """The block being read: its values so far."""

    __slots__ = ("line_no", "offset", "values", "per_pos", "lines", "raw")

    def __init__(self, line_no: int, offset: int, raw: str) -> None:
        self.line_no, self.offset, self.raw = line_no, offset, raw
        self.values: dict[str, str] = {}
        self.per_pos: list[str] = []
        self.lines = 0


def feed_block(block: BenchBlock, source: str, line: str) -> tuple[bool, Record | Malformed | None]:
    """(done, item) for the next line of an open block."""
    block.lines += 1
    s = line.strip()
    m = _KV.match(s)
    if m is not None and block.lines < MAX_BLOCK:
        key, val = m.group(1), m.group(2)
        if key.startswith("Position "):
            block.per_pos.append(val)
        elif key in _KEYS:
            block.values[_KEYS[key]] = val
        return False, None
    return True, _record(block, source)


def _record(block: BenchBlock, source: str) -> Record | Malformed | None:
    v = block.values
    if "al" not in v:
        return None
    nums = {k: to_float(x) for k, x in v.items()}
    if any(x is None for x in nums.values()):
        return Malformed(
            source, block.line_no, block.offset, "Speculative Decoding block: bad value", block.raw
        )
    rec = Record(source, block.line_no, block.offset, "vllm", "bench", block.raw)
    rec.accept_len = nums["al"]
    if nums.get("rate") is not None:
        rec.accept_rate = nums["rate"] / 100  # type: ignore[operator]
        rec.rate_definition = RATE_DRAFTS
    for key, attr in (("drafts", "num_drafts"), ("draft_tokens", "drafted"), ("accepted", "accepted")):
        x = nums.get(key)
        if x is not None:
            setattr(rec, attr, x if attr == "num_drafts" else int(x))
    pp = [to_float(x) for x in block.per_pos]
    if pp and all(x is not None for x in pp):
        rec.per_position = tuple(x / 100 for x in pp)  # type: ignore[operator]
    return rec
