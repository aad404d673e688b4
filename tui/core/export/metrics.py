"""specwatch's statistics as Prometheus metric families, read from the followed sources at scrape
time (a prometheus-client custom collector: nothing is updated per line).

Per source (labels ``source``, ``host``): ``specwatch_source_info`` (+ ``kind``, ``where``),
``specwatch_source_state`` (+ ``state``: 1 for the current one), ``specwatch_source_up``,
``specwatch_source_records_total``, ``specwatch_source_malformed_total``,
``specwatch_source_segments``, ``specwatch_source_last_record_age_seconds``; and
``specwatch_source_export_error`` (+ ``error``) for a source left out of a scrape because its
statistics could not be read (the other sources are served as usual).

Per segment and rank (labels ``source``, ``host``, ``segment``, ``current`` ("true" for the
segment being written), ``rank`` ("all" for the whole segment, else each rank when there are
several), ``family``, ``model``, ``config``): ``specwatch_records_total``,
``specwatch_accepted_tokens_total`` / ``specwatch_drafted_tokens_total`` (where the records count
tokens), ``specwatch_accept_len_{mean,window_mean,last,weighted_mean,ci95_halfwidth,values}``,
``specwatch_accept_rate_normalized_{mean,window_mean,last}`` (accepted drafts / proposed
drafts = (accept len − 1) / D, when D is known), ``specwatch_accept_rate_printed_{mean,window_mean}``
(+ ``definition``), ``specwatch_accept_len_pooled`` / ``specwatch_accept_rate_pooled`` (+
``_ci95_halfwidth``: the values pooled from printed counts, where there are counts — a log with
counts and no printed accept len gets the pooled rate, as ``summary`` shows it),
``specwatch_last_record_age_seconds`` and ``specwatch_segment_info``
(+ ``reason``). Every value is the one ``specwatch summary --json`` reports for the same input
(``mean``, ``window_mean``, ``last``, ``weighted_mean``, the CI half-width, ``n``, ``tokens``,
``pooled``). The series' names and words come from the quantity registry
(:mod:`tui.core.model.quantities`: each quantity's ``prometheus`` stem).
Ages are seconds since the newest record: by the log's own clock where that is older than the
record's arrival and agrees with this machine's (an old file or a replay read whole: days, not
the seconds since it was read), else since specwatch received it
(:meth:`tui.core.pipeline.follow.Followed.age`).

Also per source: ``specwatch_oversized_lines_total`` / ``specwatch_oversized_bytes_total`` (lines
longer than a line may be, not read: counted by :meth:`Exported.count`), and per exported segment
``specwatch_values_refused_total`` (labels of the segment + ``metric``: the field, ``reason``:
``nonfinite`` or ``out_of_range``), the values the statistics' checks left out.

Every label value and HELP text is passed through :func:`tui.core.model.sanitize.visible`
(families from ``extra`` too): model paths, config values, labels and file names come from
outside, and no C0/C1 control or bidi override of theirs reaches the scrape (other Unicode does).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from tui.core.model import quantities
from tui.core.model.records import Item, Oversized
from tui.core.model.sanitize import visible
from tui.core.pipeline.follow import Followed
from tui.core.pipeline.status import STATES, Status
from tui.core.stats import rates
from tui.core.stats.metrics import MetricSet
from tui.core.stats.segments import Segment

DEFAULT_SEGMENTS = 3
SEG_LABELS = ["source", "host", "segment", "current", "rank", "family", "model", "config"]
SRC_LABELS = ["source", "host"]


@dataclass(slots=True)
class Exported:
    """A followed source as the exporter shows it."""

    state: Followed
    host: str
    kind: str
    where: str
    oversized: int = 0  # lines too long to be read
    oversized_bytes: int = 0

    def count(self, items: Iterable[tuple[Item, int]]) -> None:
        """Count the oversized lines among items the source's driver returned."""
        for it, _ in items:
            if isinstance(it, Oversized):
                self.oversized += 1
                self.oversized_bytes += it.nbytes


class _Families:
    def __init__(self) -> None:
        self.fams: dict[str, GaugeMetricFamily | CounterMetricFamily] = {}

    def add(
        self, name: str, doc: str, labels: list[str], values: list[str], value: float, counter: bool = False
    ) -> None:
        fam = self.fams.get(name)
        if fam is None:
            cls = CounterMetricFamily if counter else GaugeMetricFamily
            fam = self.fams[name] = cls(name, visible(doc), labels=labels)
        fam.add_metric([visible(v) for v in values], value)

    def merge(self, other: _Families) -> None:
        for name, fam in other.fams.items():
            mine = self.fams.get(name)
            if mine is None:
                self.fams[name] = fam
            else:
                mine.samples.extend(fam.samples)


def build_families(
    sources: Sequence[Exported], *, segments: int = DEFAULT_SEGMENTS, now: float | None = None
) -> list[Metric]:
    """All the exporter's metric families, from the sources' statistics as they are now.

    Each source is built on its own: one whose statistics cannot be read (a value that makes
    the arithmetic fail) is left out of this scrape and counted in
    ``specwatch_source_export_error`` (labels ``source``, ``host``, ``error``: the exception's
    type), and every other source is served as usual."""
    now = time.monotonic() if now is None else now
    f = _Families()
    for ex in sources:
        one = _Families()
        try:
            _one_source(one, ex, segments, now)
        except (ArithmeticError, ValueError, TypeError) as exc:
            f.add(
                "specwatch_source_export_error",
                "1 when this source's statistics could not be exported in this scrape (left out).",
                SRC_LABELS + ["error"],
                [ex.state.label, ex.host, type(exc).__name__],
                1,
            )
            continue
        f.merge(one)
    return list(f.fams.values())


def _one_source(f: _Families, ex: Exported, segments: int, now: float) -> None:
    _source(f, ex, now)
    st = ex.state
    segs = list(st.stats.segments)
    current = segs[-1]
    shown = [s for s in segs if s.records][-segments:] if segments > 0 else []
    if current not in shown:
        shown.append(current)
    for seg in shown:
        _segment(f, ex, seg, seg is current, now)


def _source(f: _Families, ex: Exported, now: float) -> None:
    st = ex.state
    lv = [st.label, ex.host]
    f.add(
        "specwatch_source_info",
        "A source specwatch follows (value 1).",
        SRC_LABELS + ["kind", "where"],
        lv + [ex.kind, ex.where],
        1,
    )
    for state in STATES:
        f.add(
            "specwatch_source_state",
            "The source's state: 1 for the current one.",
            SRC_LABELS + ["state"],
            lv + [state],
            1.0 if st.status == state else 0.0,
        )
    f.add(
        "specwatch_source_up",
        "1 when the source is being read (live or idle), else 0.",
        SRC_LABELS,
        lv,
        1.0 if st.status in (Status.LIVE, Status.IDLE) else 0.0,
    )
    f.add(
        "specwatch_source_records",
        "Records (metric lines) read from the source.",
        SRC_LABELS,
        lv,
        st.stats.records,
        counter=True,
    )
    f.add(
        "specwatch_source_malformed",
        "Metric lines that could not be read.",
        SRC_LABELS,
        lv,
        st.stats.malformed,
        counter=True,
    )
    f.add(
        "specwatch_source_segments",
        "Segments so far: 1 + the restarts found in the log or marked with n (a truncation or "
        "rotation does not open one).",
        SRC_LABELS,
        lv,
        st.stats.current.index + 1,
    )
    for name, doc, v in (
        ("lines", "Lines longer than a line may be (not read).", ex.oversized),
        ("bytes", "Bytes of the lines too long to be read.", ex.oversized_bytes),
    ):
        f.add(f"specwatch_oversized_{name}", doc, SRC_LABELS, lv, v, counter=True)
    age = st.age(None, now)
    if age is not None:
        f.add(
            "specwatch_source_last_record_age_seconds",
            "Seconds since the newest record (by the log's clock for an old file, else since it arrived).",
            SRC_LABELS,
            lv,
            age,
        )


def _seg_labels(ex: Exported, seg: Segment, current: bool, rank: str) -> list[str]:
    c = seg.config
    config = c.label()
    return [
        ex.state.label,
        ex.host,
        str(seg.index),
        "true" if current else "false",
        rank,
        c.family or "",
        c.model_path or "",
        "" if config == "config unknown" else config,
    ]


def _segment(f: _Families, ex: Exported, seg: Segment, current: bool, now: float) -> None:
    rd = seg.rate_definition()
    tr = rates.normalise_transform(rd.drafts_per_step)
    base = _seg_labels(ex, seg, current, "all")
    f.add(
        "specwatch_segment_info",
        "A segment (value 1); reason: what opened it.",
        SEG_LABELS + ["reason"],
        base + [seg.reason],
        1,
    )
    if seg.config.synthetic:  # only there for such a segment: its acceptance is not measured
        f.add(
            "specwatch_segment_synthetic",
            "1: the segment's server ran a synthetic acceptance mode (benchmarking): its acceptance "
            "series are drawn at random, not measured; no alert or verdict uses them.",
            SEG_LABELS,
            base,
            1,
        )
    for reason, counts in (("nonfinite", seg.refused.nonfinite), ("out_of_range", seg.refused.out_of_range)):
        for metric, n in sorted(counts.items()):
            f.add(
                "specwatch_values_refused",
                "Values the checks left out of the statistics (metric: the field; reason: why).",
                SEG_LABELS + ["metric", "reason"],
                base + [metric, reason],
                n,
                counter=True,
            )
    groups: list[tuple[str, MetricSet]] = [("all", seg.all)]
    if len(seg.ranks) > 1:
        groups += sorted(seg.ranks.items())
    for rank, m in groups:
        lv = base if rank == "all" else _seg_labels(ex, seg, current, rank or "untagged")
        _metric_set(f, lv, m, tr, rd.definition)
        age = ex.state.age((seg.index, None if rank == "all" else rank), now)
        if age is not None:
            f.add(
                "specwatch_last_record_age_seconds",
                "Seconds since this group's newest record (by the log's clock for an old file, else since it arrived).",
                SEG_LABELS,
                lv,
                age,
            )


def _metric_set(
    f: _Families, lv: list[str], m: MetricSet, tr: tuple[float, float] | None, definition: str | None
) -> None:
    f.add("specwatch_records", "Records in this segment / rank.", SEG_LABELS, lv, m.records, counter=True)
    if m.drafted:
        for name in ("accepted", "drafted"):
            q = quantities.get(name)
            f.add(
                str(q.prometheus),
                f"{q.help[0].upper()}{q.help[1:]}.",
                SEG_LABELS,
                lv,
                getattr(m, name),
                counter=True,
            )
    _pooled(f, lv, m)
    _added(f, lv, m)
    al = m.accept_len
    stem = quantities.get("accept_len").prometheus
    if al.n:
        hw = al.halfwidth()
        for name, doc, v in (
            ("mean", "Mean accept len of the records (the segment mean).", al.mean),
            ("window_mean", "Mean accept len of the latest records (the recent window).", al.window_mean),
            ("last", "Accept len of the newest record.", al.last),
            (
                "weighted_mean",
                "Accept len pooled over the records' weights (requests / drafts).",
                al.weighted_mean,
            ),
            ("ci95_halfwidth", "Half-width of the 95% confidence interval of the mean (batch means).", hw),
            ("values", "Accept len values in the mean.", float(al.n)),
        ):
            if v is not None:
                f.add(f"{stem}_{name}", doc, SEG_LABELS, lv, v)
    rate_stem = quantities.get("accept_rate").prometheus
    if al.n and tr is not None:
        a, b = tr
        for name, v in (("mean", al.mean), ("window_mean", al.window_mean), ("last", al.last)):
            if v is not None:
                f.add(
                    f"{rate_stem}_normalized_{name}",
                    f"Accept rate as accepted drafts / proposed drafts = (accept len − 1) / D ({name}).",
                    SEG_LABELS,
                    lv,
                    a + b * v,
                )
    ar = m.accept_rate
    if ar.n:
        for name, v in (("mean", ar.mean), ("window_mean", ar.window_mean)):
            if v is not None:
                f.add(
                    f"{rate_stem}_printed_{name}",
                    f"Accept rate as the server printed it ({name}); its definition is in the label.",
                    SEG_LABELS + ["definition"],
                    lv + [definition or "unknown"],
                    v,
                )


def _added(f: _Families, lv: list[str], m: MetricSet) -> None:
    """The quantities registered beyond the built-in ones (a family's own) that the exporter shows:
    ``{prometheus}_{mean,window_mean,last,ci95_halfwidth,values}``, as for accept len."""
    for name, s in m.more.items():
        q = quantities.find(name)
        if q is None or q.prometheus is None or not q.shown_in(quantities.Output.EXPORT) or not s.n:
            continue
        unit = f" ({q.unit})" if q.unit else ""
        for part, doc, v in (
            ("mean", f"Mean {q.label}{unit} of the records.", s.mean),
            ("window_mean", f"Mean {q.label}{unit} of the latest records.", s.window_mean),
            ("last", f"{q.label}{unit} of the newest record.", s.last),
            ("ci95_halfwidth", f"Half-width of the 95% interval of the mean {q.label}.", s.halfwidth()),
            ("values", f"{q.label} values in the mean.", float(s.n)),
        ):
            if v is not None:
                f.add(f"{q.prometheus}_{part}", doc[0].upper() + doc[1:], SEG_LABELS, lv, v)


def _pooled(f: _Families, lv: list[str], m: MetricSet) -> None:
    """The values pooled from printed counts, as ``summary`` reports them (``accept_len.pooled``,
    ``accept_rate.pooled``): accept len 1 + Σaccepted / Σdrafts where drafts are counted, accept
    rate Σaccepted / Σdrafted, each with its 95% half-width."""
    for name, series, formula in (
        ("accept_len", m.pooled_len, "1 + Σaccepted / Σdrafts"),
        ("accept_rate", m.pooled_rate, "Σaccepted / Σdrafted"),
    ):
        if not series.n:
            continue
        e = series.estimate()
        stem = f"{quantities.get(name).prometheus}_pooled"
        label = quantities.label(name)
        if e.value is not None:
            f.add(
                stem,
                f"{label[0].upper()}{label[1:]} pooled from the counts: {formula}.",
                SEG_LABELS,
                lv,
                e.value,
            )
        hw = e.halfwidth()
        if hw is not None:
            f.add(
                f"{stem}_ci95_halfwidth",
                f"Half-width of the 95% interval of the pooled {label}.",
                SEG_LABELS,
                lv,
                hw,
            )


def clean_family(m: Metric) -> Metric:
    """``m`` with its HELP text and every label value made visible (a family not built here)."""
    m.documentation = visible(m.documentation)
    m.samples = [type(s)(s.name, {k: visible(v) for k, v in s.labels.items()}, *s[2:]) for s in m.samples]
    return m


class SpecwatchCollector:
    """prometheus-client collector over the followed sources. With ``loop`` (the asyncio loop
    that feeds the sources; build the collector in that loop's thread), scrapes served by other
    threads read the statistics inside that loop, so they never see a half-fed batch."""

    def __init__(
        self,
        sources: Callable[[], Sequence[Exported]] | Sequence[Exported],
        *,
        segments: int = DEFAULT_SEGMENTS,
        loop: asyncio.AbstractEventLoop | None = None,
        extra: Callable[[], Iterable[Metric]] | None = None,
    ) -> None:
        self._sources = sources if callable(sources) else (lambda: sources)
        self.segments = segments
        self.loop = loop
        self._loop_thread = threading.get_ident() if loop is not None else None
        self.extra = extra

    def _build(self) -> list[Metric]:
        fams = build_families(self._sources(), segments=self.segments)
        if self.extra is not None:
            fams += [clean_family(m) for m in self.extra()]
        return fams

    async def _build_async(self) -> list[Metric]:
        return self._build()

    def collect(self) -> Iterable[Metric]:
        loop = self.loop
        if loop is not None and loop.is_running() and threading.get_ident() != self._loop_thread:
            try:
                fut = asyncio.run_coroutine_threadsafe(self._build_async(), loop)
            except RuntimeError:  # the loop closed meanwhile (shutting down): nothing changes any more
                return self._build()
            return fut.result(timeout=30)
        return self._build()
