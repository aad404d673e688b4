"""Segments: the stretches of a log between restarts, each with the config that produced it.

Segments follow the server, not the file. A segment opens at the start of a source, at a
startup marker (args dump, version line, ready line, uvicorn start, a Prometheus counter reset)
and at a manual "I restarted the server" mark (``restarted``). Markers that follow each other
with no metric record between them belong to one startup and update the same segment.

A truncation (copytruncate), a rotation or a switch to a newer file is kept as an event
(:attr:`SourceStats.events`) and nothing more: the segment and its config carry on, unless the
new file's own lines show a restart (a startup marker), which then opens exactly one segment.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable, Iterable, Sequence

from tui.core.formats import registry
from tui.core.formats.plugin import RateEvidence
from tui.core.formats.server_config import ServerConfig
from tui.core.model.columns import RecordColumns, row_lengths
from tui.core.model.records import RESTART, Item, Malformed, Marker, Record, format_ts
from tui.core.sources.base import SourceEvent
from tui.core.stats import diagnostics, drafts, eras, rates, restarts
from tui.core.stats.checks import MAX_DEPTH, Refused, clean
from tui.core.stats.compare import MEAN_OF_LINES, POOLED
from tui.core.stats.depth import ratio_k, running_k
from tui.core.stats.load import LoadStrata
from tui.core.stats.metrics import MetricSet, Prepared, prepare
from tui.core.stats.payoff import speculation
from tui.core.stats.precompute import Precomputed, fits
from tui.core.stats.requests import RequestSet
from tui.core.stats.requests import to_dict as requests_dict

# The rule above in one sentence, as the help and the README say it (a test keeps them in step).
SEGMENT_RULE = (
    "Segments follow the server, not the file: they open at restarts found in the log or at `n` "
    "in the app; a truncation, rotation or switch to a newer file is an event, not a new segment."
)

MAX_RANKS = 256
MAX_SEGMENTS = 500  # older ones are dropped (their records still count in the source totals)
FEW = diagnostics.FEW  # (read here by the panes)


class Segment:
    __slots__ = tuple(
        "index reason start_line start_ts config all ranks malformed _rate_pairs cached_rate_def markers"
        " label printed_def refused _k load requests era drafts".split()
    )

    def __init__(
        self,
        index: int,
        reason: str,
        start_line: int | None,
        start_ts: float | None,
        config: ServerConfig | None = None,
        label: str | None = None,
    ) -> None:
        self.index = index
        self.reason = reason
        self.start_line = start_line
        self.start_ts = start_ts
        self.config = config or ServerConfig()
        self.all = MetricSet()
        self.ranks: dict[str, MetricSet] = {}
        self.malformed = 0
        self._rate_pairs: list[tuple[float, float]] = []
        self.cached_rate_def: rates.RateDefinition | None = None
        self.markers: list[str] = []
        self.label = label
        self.printed_def: str | None = None  # as the records state it (vLLM, llama.cpp)
        self.refused = Refused()
        self._k: int | None = None  # draft depth read off the records (per-position list, counts)
        self.load = LoadStrata()  # accept len per batch-size bin
        self.requests: RequestSet | None = None  # per-request accept lengths (stats/requests.py)
        self.era: eras.EraTally | None = None  # the release era of its lines (stats/eras.py)
        self.drafts = drafts.DraftTally()  # drafts from the printed mean (stats/drafts.py)

    @property
    def records(self) -> int:
        return self.all.records

    def rank_set(self, rank: str) -> MetricSet | None:
        m = self.ranks.get(rank)
        if m is None and len(self.ranks) < MAX_RANKS:
            m = self.ranks[rank] = MetricSet()
            m.set_depth(self.depth())
        return m

    def depth(self) -> int | None:
        """The draft depth k (accept len ≤ k + 1), from the config or the records."""
        c = self.config
        steps = c.num_steps if registry.get(c.family).num_steps_bound_depth else None
        known = [k for k in (c.drafts_per_step, steps) if k]
        if known:
            return max(known)
        return self._k

    def _prepare(
        self, cols: RecordColumns, raws: Sequence[str] | None, pre: Precomputed | None
    ) -> tuple[dict[str, Sequence[float]], Refused, dict[str, tuple[float, float]], Precomputed | None]:
        """Learn family / depth from the run, check its values, complete the drafts count. ``pre``
        (the run's :func:`precompute` d reduction) comes back as is (last item) when its
        assumptions hold here, else None."""
        if cols.family and not self.config.family:
            self.config.family = cols.family
            self.cached_rate_def = None
        if cols.rate_definition is not None and self.printed_def is None:
            self.printed_def = cols.rate_definition
        k_before = self.depth()
        self._learn_k(cols)
        fmt = registry.get(cols.family)
        if pre is not None and fits(pre, self.depth(), fmt.drafts_from_depth):
            if pre.refused.total():
                self.refused.merge(pre.refused)
            return pre.v, pre.refused, pre.full, pre
        v, refused, full = clean(cols, self.depth(), raws)
        if refused.total():
            self.refused.merge(refused)
        k = self.depth()
        if k and fmt.drafts_from_depth and not cols.cumulative and not self.drafts.varies:
            nd, dr = v["num_drafts"], v["drafted"]
            if any(x != x and y == y for x, y in zip(nd, dr)):  # drafts = drafted tokens / k
                ks = [k] * cols.n if k == k_before else running_k(cols, k_before)
                v["num_drafts"] = array(
                    "d", [y / kk if x != x and y == y and kk else x for x, y, kk in zip(nd, dr, ks)]
                )
                full.pop("num_drafts", None)
        return v, refused, full, None

    def _learn_k(self, cols: RecordColumns) -> None:
        ks = row_lengths(cols.per_position)
        ratio = None if self.drafts.varies else ratio_k(cols)  # (drafts from the means: not whole)
        if ratio is not None:
            ks.add(ratio[1])
        ks.discard(0)
        if ks and (self._k is None or max(ks) > self._k) and max(ks) <= 64:
            self._k = max(ks)
        for m in (self.all, *self.ranks.values()):
            m.set_depth(self.depth())
        self.load.set_depth(self.depth())

    def _add_values(
        self, cols: RecordColumns, v: dict[str, Sequence[float]], p: Prepared, pre: Precomputed | None
    ) -> None:
        fam, cum, pp = cols.family, cols.cumulative, cols.per_position
        self.all.add(p)
        # reduced in a worker process, or here
        self.load.add(v, cum, pre.load if pre is not None and pre.load is not None else None)
        if cols.ranks is not None:
            groups: dict[str, list[int]] = {}
            r0 = cols.ranks[0]
            if r0 is not None and cols.ranks.count(r0) == cols.n:  # one rank (the usual case)
                groups[r0] = list(range(cols.n))
            else:
                for i, r in enumerate(cols.ranks):
                    if r is not None:
                        groups.setdefault(r, []).append(i)
            for rank, idx in groups.items():
                m = self.rank_set(rank)
                if m is None:
                    continue
                if len(idx) == cols.n:
                    m.add(p)
                elif pre is not None and pre.by_rank is not None and rank in pre.by_rank:
                    m.add(pre.by_rank[rank])
                else:
                    sub = {k: array("d", [c[i] for i in idx]) for k, c in v.items()}
                    m.add(prepare(len(idx), sub, fam, cum, None if pp is None else [pp[i] for i in idx]))
        if registry.get(fam).collects_rate_pairs and len(self._rate_pairs) < rates.MAX_SAMPLES:
            al, ar = v["accept_len"], v["accept_rate"]
            pairs = [(a, r) for a, r in zip(al[:400], ar[:400]) if a == a and r == r]
            self.add_rate_pairs(pairs)

    def add_rate_pairs(self, pairs: Iterable[tuple[float, float]]) -> None:
        room = rates.MAX_SAMPLES - len(self._rate_pairs)
        if room > 0:
            new = list(pairs)[:room]
            if new:
                self._rate_pairs.extend(new)
                self.cached_rate_def = None

    def rate_definition(self) -> rates.RateDefinition:
        if self.cached_rate_def is not None:
            return self.cached_rate_def
        fmt = registry.get(self.config.family)  # the family says how its printed rate is defined
        seen = RateEvidence(self.printed_def, self.config, self._k, self._rate_pairs, self.all.first_ts)
        rd = fmt.rate_definition(seen)
        era = self.era.era if self.era is not None else None
        if era is not None and era.note:  # the era's numbers are on another scale: said
            rd.note = era.note
        self.cached_rate_def = rd if fmt.rate_definition_cached else None  # else cheap, may change
        return rd

    def drafted_per_step(self) -> float | None:
        """Draft tokens verified per step: Σdrafted / Σdrafts where lines print counts, else the
        configured drafts per step."""
        m = self.all
        if m.pooled_len.denominator > 0 and m.pooled_rate.denominator > 0:
            return m.pooled_rate.denominator / m.pooled_len.denominator
        k = self.config.drafts_per_step
        return float(k) if k else None

    def no_draft_accepted(self) -> str | None:
        return diagnostics.no_draft_accepted(self)

    def diagnostics(self) -> list[dict]:
        return diagnostics.of_segment(self)

    def to_dict(self) -> dict:
        rd = self.rate_definition()
        tr = rates.normalise_transform(rd.drafts_per_step)
        d: dict = {
            "index": self.index,
            "reason": self.reason,
            "label": self.label or self.config.label(),
            "start_line": self.start_line,
            "start_time": format_ts(self.start_ts),
            "first_record_time": format_ts(self.all.first_ts),
            "last_record_time": format_ts(self.all.last_ts),
            "config": self.config.summary_dict(),
            "records": self.records,
            "malformed": self.malformed,
            "rate_definition": rd.to_dict(),
        }
        d.update(self.all.to_dict(tr))
        if d["accept_len"]["pooled"] is not None and self.drafts.varies:
            d["accept_len"]["pooled"]["method"] = self.drafts.method()
        d["ranks"] = (
            {k: v.to_dict(tr) for k, v in sorted(self.ranks.items())} if len(self.ranks) > 1 else None
        )
        d.setdefault("per_position", None)
        d["by_batch_size"] = self.load.to_list(POOLED if self.all.pooled_len.n else MEAN_OF_LINES)
        al = self.all.pooled_len if self.all.pooled_len.n else self.all.accept_len
        d["speculation"] = speculation(self.all.throughput, al.estimate(), self.drafted_per_step())
        d["diagnostics"] = self.diagnostics()
        d["requests"] = requests_dict(self.requests)
        if self.config.synthetic:  # its acceptance is not measured: no verdict, no alert
            d["synthetic"] = True
        return d


class SourceStats:
    """All statistics of one source: totals plus its segments."""

    def __init__(self, source: str, label: str | None = None) -> None:
        self.source = source
        self.label = label or source
        self.total = MetricSet()
        self.segments: deque[Segment] = deque(maxlen=MAX_SEGMENTS)
        self.segments.append(Segment(0, "start", None, None))
        self.records = 0
        self.malformed = 0
        self.malformed_examples: deque[tuple[int, str]] = deque(maxlen=20)
        self.markers = 0
        self.events: deque[SourceEvent] = deque(maxlen=200)
        self.refused = Refused()  # values refused by the checks, over all segments
        self._total_k: int | None = None
        self.last_elapsed: float | None = None  # llama.cpp: the last record's time since start
        self.requests: RequestSet | None = None  # per-request accept lengths, all segments
        self.hold_eras = False  # a whole read: runs wait for their segment's era (eras.hold)
        self.held: list[Callable[[], None]] | None = None  # the runs held, each as it goes in
        self.held_records = 0

    @property
    def current(self) -> Segment:
        return self.segments[-1]

    @property
    def segment_index(self) -> int:
        return self.current.index

    def new_segment(
        self, reason: str, line_no: int | None = None, ts: float | None = None, label: str | None = None
    ) -> Segment:
        self.release_held()  # the runs held belong to the segment that ends here
        cur = self.current
        if cur.records == 0 and cur.malformed == 0 and cur.requests is None:
            # Nothing measured yet in this one: it simply gets the new reason.
            cur.reason = reason if cur.reason == "start" or not cur.markers else cur.reason
            if label:
                cur.label = label
            if cur.start_line is None:
                cur.start_line, cur.start_ts = line_no, ts
            return cur
        seg = Segment(cur.index + 1, reason, line_no, ts, ServerConfig(family=cur.config.family), label)
        self.segments.append(seg)
        return seg

    def add_columns(
        self,
        cols: RecordColumns,
        raws: Sequence[str] | None = None,
        reduced: Precomputed | None = None,
        *,
        era_read: bool = False,
    ) -> None:
        """The one way records enter the statistics: a run of consecutive records of the current
        segment, as columns. Each value is checked once here (finite, physically possible);
        refused values are counted and kept out of every sum. ``raws``: the records' lines, when
        the reader has them (only read to quote a refused value). ``reduced``: the run already
        checked and reduced where it was scanned (:func:`tui.core.stats.precompute.precompute`),
        merged as it is when the segment's bounds allow, else ignored (the same result).
        ``era_read``: the run's records were put on their era's scale already (:meth:`feed`)."""
        if cols.n == 0 or (self.hold_eras and eras.hold_columns(self, cols, raws, reduced, era_read)):
            return
        if registry.get(cols.family).elapsed_clock and restarts.cut_at_clock(self, cols, raws, reduced):
            return
        shifted = not era_read and eras.onto_era_scale(self, cols)  # (first: the drafts read its scale)
        if drafts.onto_drafts(self.current, cols) or shifted:
            reduced = None  # reduced on the printed scale, or with drafted / k
        if cols.kind == "request" or cols.kind in registry.get(cols.family).request_kinds:
            self._add_requests(cols)
            if cols.kind == "request":  # never in the interval statistics
                return
        seg = self.current
        v, refused, full, pre = seg._prepare(cols, raws, reduced)
        k = seg.depth() or MAX_DEPTH  # the totals' bound: the deepest of the segments
        if self._total_k is None or k > self._total_k:
            self._total_k = k
            self.total.set_depth(k)
        if refused.total():
            self.refused.merge(refused)
            for m in (self.total, seg.all):
                m.count_refused(refused.nonfinite, refused.out_of_range)
        self.records += cols.n
        p = (
            pre.prepared
            if pre is not None
            else prepare(
                cols.n,
                v,
                cols.family,
                cols.cumulative,
                cols.per_position,
                full,
                cols.values["system_efficiency"],
            )
        )
        self.total.add(p)
        seg._add_values(cols, v, p, pre)

    def _add_requests(self, cols: RecordColumns) -> None:
        seg = self.current
        if registry.get(cols.family).requests_name_family and not seg.config.family:
            seg.config.family = cols.family
        for target in (seg, self):
            if target.requests is None:
                target.requests = RequestSet()
            target.requests.add_columns(cols)

    def feed(self, items: Iterable[Item]) -> None:
        """Parsed items in order: runs of records go in as columns (:meth:`add_columns`, so one by
        one and in bulk give the same statistics); markers open segments; malformed lines count."""
        run: list[Record] = []
        run_key: tuple = ()
        for it in items:
            if isinstance(it, Record):
                if it.extra and RESTART in it.extra:  # counters went back: a new server
                    if run:
                        self.feed_records(run)
                        run = []
                    self.on_counter_reset(it)
                key = (it.family, it.kind, it.cumulative)
                if run and key != run_key:
                    self.feed_records(run)
                    run = []
                run.append(it)
                run_key = key
                continue
            if isinstance(it, Marker):  # only a marker ends a run: it may open a segment
                if run:
                    self.feed_records(run)
                    run = []
                self.on_marker(it)
            elif isinstance(it, Malformed):
                self.malformed += 1
                self.current.malformed += 1
                self.malformed_examples.append((it.line_no, it.reason))
        if run:
            self.feed_records(run)

    def release_held(self) -> None:
        eras.release(self)  # runs held back for their segment's era (hold_eras) go in now

    def feed_records(self, run: list[Record]) -> None:
        if self.hold_eras and eras.hold_records(self, run):
            return
        eras.records_onto_era_scale(self, run)
        self.add_columns(RecordColumns.from_records(run), [r.raw for r in run], era_read=True)

    def foresee(self, runs: Sequence[RecordColumns]) -> None:
        """Runs about to go in through :meth:`add_columns` in this segment (see stats/eras.py)."""
        eras.foresee(self, runs)

    def on_marker(self, m: Marker) -> None:
        self.markers += 1
        if m.continuation:
            self.current.config.update(m.family, m.config, m.version)
            self.current.cached_rate_def = None  # the config it was read with changed
            return
        seg = self.new_segment(m.kind, m.line_no, m.timestamp)
        seg.markers.append(m.kind)
        seg.config.update(m.family, m.config, m.version)
        seg.cached_rate_def = None

    def on_counter_reset(self, r: Record) -> None:
        """A record whose cumulative counters went back (``extra[RESTART]``): see restarts.py."""
        restarts.counter_reset(self, r)

    def on_event(self, ev: SourceEvent) -> None:
        """A source event. Only ``restarted`` opens a segment; a file change (truncated, rotated,
        switched) is remembered in :attr:`events` and the segment carries on."""
        self.events.append(ev)
        if ev.opens_segment:
            seg = self.new_segment(ev.kind.value, None, ev.time)
            seg.markers.append(ev.kind.value)

    def synthetic(self) -> list[Segment]:
        """The segments whose server ran a synthetic acceptance mode (benchmarking)."""
        return [s for s in self.segments if s.config.synthetic]

    def to_dict(self) -> dict:
        self.release_held()
        synthetic = {"synthetic": True} if self.synthetic() else {}
        total = self.total.to_dict()
        varied = [s for s in self.segments if s.drafts.varies]
        if varied and total["accept_len"]["pooled"] is not None:  # said per segment, named here
            segs = ", ".join(str(s.index) for s in varied)
            total["accept_len"]["pooled"]["method"] = f"segment {segs}: {varied[-1].drafts.method()}"
        return {
            **synthetic,
            "source": self.source,
            "label": self.label,
            "records": self.records,
            "malformed": self.malformed,
            "malformed_examples": [{"line": n, "reason": r} for n, r in self.malformed_examples],
            "refused": self.refused.to_dict(),
            **{k: v for k, v in total.items() if k not in ("records", "accept_rate_normalized")},
            "segments": [s.to_dict() for s in self.segments],
            "requests": requests_dict(self.requests),
        }
