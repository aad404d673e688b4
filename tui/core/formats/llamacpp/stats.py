"""llama.cpp: the ``statistics`` lines of ``common_speculative_print_stats`` (docs/formats.md,
"llama.cpp statistics lines").

``statistics        draft-mtp: #calls(b,g,a) =    1    120    120, #gen drafts =    120, #acc
drafts =   101, #gen tokens =    340, #acc tokens =   226, #mean acc len = 2.88, #acc rate/pos =
(0.842, 0.650, 0.392), dur(b,g,a) = 0.006, 410.332, 0.151 ms`` (padded or not; ``#mean acc
len`` / ``#acc rate/pos`` since PR #24536; the early form ``#calls = N``). One line per
speculative implementation after each request's ``print_timing`` block.

The counters are cumulative since the server started, per implementation: a record carries the
differences since the previous line of the same implementation (``a`` = verify steps handed
back, ``#acc tokens`` = accepted drafts, ``#gen tokens`` = drafted tokens, ``#gen drafts`` /
``#acc drafts`` = drafts generated / with a token accepted), so that ``accept_len_derived = 1 +
Δacc tokens / Δa``. A line whose ``a`` did not move gives nothing. A counter that went down is a
new server: the line counts from zero and its record says so (``extra["restart"]``: the
statistics open a segment there). The printed ``#mean acc len`` is cumulative: kept in
``extra``, never taken as the interval's length.

Never counted twice: these differences cover the same verify steps as the per-request
``print_timing`` line just before them. So:

* no per-request draft line seen yet in the source (a statistics-only log, Ollama without
  ``OLLAMA_DEBUG``): each difference is an interval record (kind "stats") with its counts;
* after a per-request line that printed its mean length: the interval record (kind "stats")
  carries the verify steps and ``accept_len_derived`` only — the accepted / drafted tokens are
  the per-request line's, already counted — so the pooled accept length (1 + Σaccepted /
  Σsteps) comes from the statistics and the pooled rate from the per-request lines;
* after a per-request line without a length (form B, llama-cpp-python 0.3.28): the interval
  record carries the verify steps and ``accept_len_derived`` only, as above, so the pooled
  accept length comes from the statistics here too (the counters are server-wide, one set per
  implementation shared by every slot: the differences add up to the run's totals whatever the
  number of slots). When the difference holds exactly that request's tokens (``Δacc tokens`` and
  ``Δgen tokens`` equal to its ``accepted`` / ``generated``: no other slot drafted since the
  previous line) it is also that request's length: kind ``stats_request`` (a request too,
  ``[statistics] request_kinds``); otherwise (other slots busy) kind "stats", the interval only.
"""

from __future__ import annotations

import re

from tui.core.formats.llamacpp.grammar import STATS
from tui.core.model.records import RATE_DRAFTS, RESTART, Record

ANCHOR = STATS

_LINE = re.compile(
    r"statistics +(\S+?): #calls(?:\(b,g,a\))? = *(\d+)(?: +(\d+) +(\d+))?, #gen drafts = *(\d+), "
    r"#acc drafts = *(\d+), #gen tokens = *(\d+), #acc tokens = *(\d+)"
    r"(?:, #mean acc len = *(\d+(?:\.\d+)?))?"
)


class StatsState:
    """The last counters of each implementation, whether per-request lines were seen, and the
    ``graphs reused`` count printed before the next per-request draft line."""

    __slots__ = (
        "broken",
        "graphs",
        "last",
        "per_request",
        "request_tokens",
        "steps",
        "synthetic",
        "wants_len",
    )

    def __init__(self) -> None:
        # impl -> (a, acc tokens, gen tokens, gen drafts, acc drafts)
        self.last: dict[str, tuple[int, int, int, int, int]] = {}
        self.per_request = False  # a per-request draft line was seen
        self.wants_len = False  # the last one printed no mean length
        self.request_tokens: tuple[int, int] | None = None  # its (accepted, generated)
        self.graphs: int | None = None
        # slot -> the accepted count of each traced verify step since its last per-request line
        self.steps: dict[str, list[int]] = {}
        self.broken: set[str] = set()  # slots whose pending steps were cut by a scanned buffer
        self.synthetic: str | None = None  # the run's synthetic acceptance, as the server said it

    def saw_request(self, has_len: bool, tokens: tuple[int, int] | None = None) -> None:
        self.per_request = True
        self.wants_len = not has_len
        self.request_tokens = tokens if not has_len else None

    def reset(self) -> None:
        self.last.clear()
        self.per_request = self.wants_len = False
        self.request_tokens = None
        self.graphs = None
        self.steps.clear()
        self.broken.clear()
        self.synthetic = None


def parse_stats(
    source: str, line_no: int, offset: int, text: str, raw: str, state: StatsState
) -> Record | None:
    m = _LINE.search(text)
    if m is None:
        return None
    impl = m.group(1)
    a = int(m.group(4)) if m.group(4) is not None else None
    gen_d, acc_d, gen, acc = (int(m.group(i)) for i in (5, 6, 7, 8))
    if a is None:  # the early "#calls = N" form: verify steps not printed
        return None
    now = (a, acc, gen, gen_d, acc_d)
    prev = state.last.get(impl)
    state.last[impl] = now
    restart = prev is not None and any(x < y for x, y in zip(now, prev))
    base = (0, 0, 0, 0, 0) if prev is None or restart else prev  # a new server counts from zero
    da, dacc, dgen, dgd, dad = (x - y for x, y in zip(now, base))
    if da <= 0:
        return None
    own = state.wants_len and state.request_tokens == (dacc, dgen)  # form B: this request's alone
    kind = "stats_request" if own else "stats"
    state.wants_len, state.request_tokens = False, None
    rec = Record(source, line_no, offset, "llamacpp", kind, raw)
    rec.num_drafts = float(da)
    rec.accept_len_derived = 1.0 + dacc / da
    rec.gen_drafts, rec.acc_drafts = dgd, dad
    if not state.per_request:  # the counts are this record's own
        rec.accepted, rec.drafted = dacc, dgen
        if dgen > 0:
            rec.accept_rate_derived = dacc / dgen
            rec.rate_definition = RATE_DRAFTS
    rec.extra["impl"] = impl
    if m.group(9) is not None:
        rec.extra["mean_acc_len_cumulative"] = m.group(9)
    if restart:
        rec.extra[RESTART] = "llama.cpp statistics counters went back"
    return rec
