"""Verdicts between whole sources (A/B) and between a source's segments (before/after a
restart), on the newest measured segment: what ``summary`` and ``stream`` print and the app's
compare bar shows."""

from __future__ import annotations

from tui.core.stats import SourceStats
from tui.core.stats.compare import POOLED, compare_accept_len, compare_accept_rate
from tui.core.stats.load_compare import compare_load_adjusted
from tui.core.stats.payoff import is_baseline, throughput_ratio
from tui.core.stats.segments import Segment


def _measured(seg: Segment) -> bool:
    """Acceptance values that were measured: a synthetic acceptance run (a benchmarking mode,
    ``ServerConfig.synthetic``) has values, drawn at random, that no verdict uses."""
    return bool(seg.all.accept_len.n or seg.all.pooled_len.n) and not seg.config.synthetic


def measured_segments(stats: SourceStats) -> list[Segment]:
    """The segments whose acceptance was measured, in order (what a segment verdict compares)."""
    return [s for s in stats.segments if _measured(s)]


def last_measured(stats: SourceStats) -> Segment:
    """The newest segment with measured acceptance values (else the newest real segment, else
    the newest)."""
    for seg in reversed(stats.segments):
        if _measured(seg):
            return seg
    real = [s for s in stats.segments if not s.config.synthetic]
    return real[-1] if real else stats.current


def comparison(a: SourceStats, b: SourceStats) -> dict:
    """B − A on the newest measured segment of each source (the config each runs now)."""
    sa, sb = last_measured(a), last_measured(b)
    out = {
        "a": {"source": a.source, "label": a.label, "segment": sa.index},
        "b": {"source": b.source, "label": b.label, "segment": sb.index},
        "accept_len": compare_accept_len(sa.all, sb.all).to_dict(),
        "accept_len_load_adjusted": compare_load_adjusted(
            sa.load, sb.load, sa.all.running_req.mean, sb.all.running_req.mean
        ),
        "throughput": throughput_ratio(
            sa.all.throughput.estimate(),
            sb.all.throughput.estimate(),
            "a" if is_baseline(a.label) else "b" if is_baseline(b.label) else None,
        ),
    }
    if (sa.all.accept_rate.n or sa.all.pooled_rate.n) and (sb.all.accept_rate.n or sb.all.pooled_rate.n):
        da, db = sa.rate_definition().definition, sb.rate_definition().definition
        c = compare_accept_rate(sa.all, sb.all).to_dict()
        c["definitions"] = [da, db]
        if da != db and c["estimator"] != POOLED:
            c["note"] = "the two servers print the rate with different definitions; compare accept len"
        out["accept_rate"] = c
    return out


def segment_comparison(stats: SourceStats) -> dict | None:
    """The newest measured segment against the one before it (before/after a restart)."""
    measured = measured_segments(stats)
    if len(measured) < 2:
        return None
    before, after = measured[-2], measured[-1]
    c = compare_accept_len(before.all, after.all).to_dict()
    c["segments"] = [before.index, after.index]
    c["accept_len_load_adjusted"] = compare_load_adjusted(
        before.load, after.load, before.all.running_req.mean, after.all.running_req.mean
    )
    return c
