"""llama.cpp: the ``statistics`` lines of ``common_speculative_print_stats`` (docs/formats.md,
"llama.cpp statistics lines").

``statistics        draft-mtp: #calls(b,g,a) =    1    120    120, #gen drafts =    120, #acc
drafts =   101, #gen tokens =    340, #acc tokens =   226, #mean acc len = 2.88, #acc rate/pos =
(0.842, 0.650, 0.392), dur(b,g,a) = 0.006, 410.332, 0.151 ms`` (padded or not; ``#mean acc
len`` / ``#acc rate/pos`` since PR #24536; the early form ``#calls = N``). One line per
speculative implementation after each request's ``print_timing`` block.

The counters are cumulative since the server started, per implementation: a record carries the
differences since the previous line of the same implementation (``a`` = verify steps handed
back, ``#acc tokens`` = accepted drafts, ``#gen tokens`` = drafted tokens), so that
``accept_len_derived = 1 + Δacc tokens / Δa``. A line whose ``a`` did not move gives nothing; a
counter that went down is a new server (the line counts from zero). The printed ``#mean acc
len`` is cumulative: kept in ``extra``, never taken as the interval's length.

Never counted twice: these differences cover the same verify steps as the per-request
``print_timing`` line just before them. So:

* no per-request draft line seen yet in the source (a statistics-only log, Ollama without
  ``OLLAMA_DEBUG``): each difference is an interval record (kind "stats");
* after a per-request line that printed its mean length: the statistics lines only move their
  baselines and give no record;
* after a per-request line without a length (the older forms): the next difference gives that
  request's length, as a record of kind "request" (the request distribution only; the
  print_timing record already carries its counts into the interval statistics). With several
  slots busy the difference also holds the other slots' steps since the previous line.
"""

from __future__ import annotations

import re

from tui.core.formats.llamacpp.grammar import STATS
from tui.core.model.records import RATE_DRAFTS, Record

ANCHOR = STATS

_LINE = re.compile(
    r"statistics +(\S+?): #calls(?:\(b,g,a\))? = *(\d+)(?: +(\d+) +(\d+))?, #gen drafts = *(\d+), "
    r"#acc drafts = *(\d+), #gen tokens = *(\d+), #acc tokens = *(\d+)"
    r"(?:, #mean acc len = *(\d+(?:\.\d+)?))?"
)


class StatsState:
    """The last counters of each implementation, and whether per-request lines were seen."""

    __slots__ = ("last", "per_request", "wants_len")

    def __init__(self) -> None:
        self.last: dict[str, tuple[int, int, int]] = {}  # impl -> (a, acc tokens, gen tokens)
        self.per_request = False  # a per-request draft line was seen
        self.wants_len = False  # the last one printed no mean length

    def saw_request(self, has_len: bool) -> None:
        self.per_request = True
        self.wants_len = not has_len

    def reset(self) -> None:
        self.last.clear()
        self.per_request = self.wants_len = False


def parse_stats(
    source: str, line_no: int, offset: int, text: str, raw: str, state: StatsState
) -> Record | None:
    m = _LINE.search(text)
    if m is None:
        return None
    impl = m.group(1)
    a = int(m.group(4)) if m.group(4) is not None else None
    acc, gen = int(m.group(8)), int(m.group(7))
    if a is None:  # the early "#calls = N" form: verify steps not printed
        return None
    prev = state.last.get(impl)
    state.last[impl] = (a, acc, gen)
    if prev is not None and (a < prev[0] or acc < prev[1] or gen < prev[2]):
        prev = None  # a counter went down: a new server, counting from zero
    da, dacc, dgen = (a - prev[0], acc - prev[1], gen - prev[2]) if prev else (a, acc, gen)
    if da <= 0 or (state.per_request and not state.wants_len):
        return None
    kind = "request" if state.wants_len else "stats"
    state.wants_len = False
    rec = Record(source, line_no, offset, "llamacpp", kind, raw)
    rec.accepted, rec.drafted, rec.num_drafts = dacc, dgen, float(da)
    rec.accept_len_derived = 1.0 + dacc / da
    if dgen > 0:
        rec.accept_rate_derived = dacc / dgen
        rec.rate_definition = RATE_DRAFTS
    rec.extra["impl"] = impl
    if m.group(9) is not None:
        rec.extra["mean_acc_len_cumulative"] = m.group(9)
    return rec
