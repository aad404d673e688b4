"""The numbers a pane shows, as plain data, and how they are written (pure Python).

Every value comes from the core's statistics (:class:`tui.core.stats.Series`), re-expressed the
way ``specwatch summary`` does (the normalised accept rate is the exact linear transform of
accept len given by :func:`tui.core.stats.rates.normalise_transform`), so the pane and
``summary --json`` agree to the last digit.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from tui.core.formats.rate_definition import words
from tui.core.model import quantities
from tui.core.model.quantities import Output
from tui.core.model.sanitize import number
from tui.core.stats import SourceStats
from tui.core.stats.compare import ESTIMATOR_WORDS, RATE_ESTIMATOR_WORDS, compare_accept_len, short_of
from tui.core.stats.estimate import MIN_INDEP
from tui.core.stats.metrics import MEAN_OF_LINES, POOLED, Headline, MetricSet, headline
from tui.core.stats.rates import normalise_transform
from tui.core.stats.segments import FEW, Segment
from tui.core.stats.series import Series
from tui.core.stats.verdicts import measured_segments

DEFINITION_WORDS = words()
VERDICT_WORDS = {
    "higher": "B higher",
    "lower": "B lower",
    "no_difference": "no significant difference",
    "insufficient": "insufficient data",
}
DASH = "—"


def number_or_dash(v: float | None, digits: int = 2) -> str:
    """``v`` as :func:`~tui.core.model.sanitize.number` writes it; a dash when missing or not finite."""
    return DASH if v is None or not math.isfinite(v) else number(v, digits)


def mean_hw(s: Series, transform: tuple[float, float] | None = None) -> tuple[float | None, float | None]:
    """(mean, 95% half-width) of a series, optionally re-expressed as a + b·x."""
    a, b = transform or (0.0, 1.0)
    m = s.mean
    hw = s.halfwidth()
    return (None if m is None else a + b * m), (None if hw is None else abs(b) * hw)


def mean_ci_text(mean: float | None, hw: float | None, n: int, digits: int = 2) -> str:
    if not n or mean is None:
        return f"{DASH} (n=0)"
    return number(mean, digits) + (f" ± {number(hw, digits)}" if hw is not None else "") + f" (n={n})"


def segment_by_index(stats: SourceStats, index: int | None) -> Segment:
    if index is not None:
        for seg in stats.segments:
            if seg.index == index:
                return seg
    return stats.current


@dataclass(frozen=True, slots=True)
class PooledFigure:
    """A value pooled from printed counts, as a pane shows it: accept len (1 + Σaccepted /
    Σdrafts) or, where the log counts no drafts, accept rate (Σaccepted / Σdrafted)."""

    quantity: str  # "accept_len" or "accept_rate"
    value: float | None
    ci95: tuple[float, float] | None
    n: int
    effective_n: float | None
    accepted: float
    denominator: float  # drafts (accept len) or drafted tokens (accept rate)
    from_means: bool = False  # the drafts came from the printed means (stats/drafts.py)

    @property
    def formula(self) -> str:
        return "1+Σaccepted/Σdrafts" if self.quantity == "accept_len" else "Σaccepted/Σdrafted"

    @property
    def denominator_words(self) -> str:
        return "drafts" if self.quantity == "accept_len" else "drafted tokens"


@dataclass(frozen=True, slots=True)
class LenFigures:
    last: float | None
    window: float | None
    window_n: int
    mean: float | None
    hw: float | None
    n: int
    total_mean: float | None
    total_n: int
    effective_n: float | None
    pooled: PooledFigure | None
    estimator: str  # what the verdicts use: "pooled" or "mean_of_lines"


@dataclass(frozen=True, slots=True)
class RateFigures:
    last: float | None
    printed_mean: float | None
    printed_hw: float | None
    printed_n: int
    definition: str | None
    definition_words: str | None
    normalised_mean: float | None
    normalised_hw: float | None
    drafts_per_step: int | None
    how: str | None
    pooled: PooledFigure | None  # only where no accept len is determined (see metrics.Headline)


@dataclass(frozen=True, slots=True)
class FlowFigures:
    last: float | None
    window: float | None
    mean: float | None
    n: int


@dataclass(frozen=True, slots=True)
class RunningFigures:
    last: float | None
    window: float | None
    n: int


@dataclass(frozen=True, slots=True)
class AddedFigures:
    """A quantity registered beyond the built-in ones (a family's own), as a pane shows it."""

    name: str
    label: str
    unit: str
    digits: int
    last: float | None
    mean: float | None
    hw: float | None
    n: int


@dataclass(frozen=True, slots=True)
class PaneNumbers:
    """What the numbers block of a pane shows (see :func:`pane_numbers`)."""

    segment: int
    segments: int
    current: bool
    reason: str
    config: str
    accept_len: LenFigures
    accept_rate: RateFigures
    throughput: FlowFigures
    running: RunningFigures
    warning: str | None
    brief: bool
    more: tuple[AddedFigures, ...] = ()


def _added(m: MetricSet) -> tuple[AddedFigures, ...]:
    out = []
    for name, series in m.more.items():
        q = quantities.find(name)
        if q is None or not q.shown_in(Output.APP):
            continue
        mean, hw = mean_hw(series)
        out.append(AddedFigures(name, q.label, q.unit, q.digits, series.last, mean, hw, series.n))
    return tuple(out)


def _pooled(h: Headline | None, from_means: bool = False) -> PooledFigure | None:
    if h is None or h.estimator != POOLED:
        return None
    e = h.estimate
    return PooledFigure(
        h.quantity, e.value, e.ci95(), e.n, e.ess, h.numerator or 0.0, h.denominator or 0.0, from_means
    )


def pane_numbers(stats: SourceStats, index: int | None = None, *, brief: bool = False) -> PaneNumbers:
    """What the numbers block of a pane shows for segment ``index`` (None: the current one).
    ``brief``: only what a compact pane shows (the rate's definition and the normalised rate are
    left out as None: the definition's inference is the costly part). The acceptance it leads
    with is the segment's :func:`tui.core.stats.metrics.headline`, as ``summary`` and ``export``."""
    seg = segment_by_index(stats, index)
    m = seg.all
    al, ar, tp, run = m.accept_len, m.accept_rate, m.throughput, m.running_req
    rd = None if brief else seg.rate_definition()
    tr = normalise_transform(rd.drafts_per_step) if rd is not None else None
    mean, hw = mean_hw(al)
    nmean, nhw = mean_hw(al, tr) if tr else (None, None)
    pmean, phw = mean_hw(ar)
    # The warning is about the figure the pane leads with (pooled counts where there are any).
    head = headline(m)
    est = head.estimate if head is not None else None
    if est is None or est.n == 0:
        warning = "no accept len values yet" if m.records or seg.index == stats.current.index else None
        if warning and seg.config.notes:  # the server said why none will come
            warning = seg.config.notes[-1]
    elif est.n < FEW:
        warning = f"n={est.n}: too few to conclude (want ≥ {FEW})"
    elif est.se is None:
        warning = "not enough data for a confidence interval"
    elif (est.ess or 0.0) < MIN_INDEP:
        warning = short_of("", est)
    else:
        warning = None
    pooled = _pooled(head, seg.drafts.varies)
    return PaneNumbers(
        segment=seg.index,
        segments=len(stats.segments),
        current=seg.index == stats.current.index,
        reason=seg.reason,
        config=seg.label or seg.config.label(),
        accept_len=LenFigures(
            last=al.last,
            window=al.window_mean,
            window_n=len(al.window),
            mean=mean,
            hw=hw,
            n=al.n,
            total_mean=stats.total.accept_len.mean,
            total_n=stats.total.accept_len.n,
            effective_n=al.estimate().ess,
            pooled=pooled if pooled is not None and pooled.quantity == "accept_len" else None,
            estimator=POOLED if m.pooled_len.n else MEAN_OF_LINES,
        ),
        accept_rate=RateFigures(
            last=ar.last,
            printed_mean=pmean,
            printed_hw=phw,
            printed_n=ar.n,
            definition=rd.definition if rd else None,
            definition_words=DEFINITION_WORDS.get(rd.definition or "", "definition unknown") if rd else None,
            normalised_mean=nmean,
            normalised_hw=nhw,
            drafts_per_step=rd.drafts_per_step if rd else None,
            how=rd.source if rd else None,
            pooled=pooled if pooled is not None and pooled.quantity == "accept_rate" else None,
        ),
        throughput=FlowFigures(last=tp.last, window=tp.window_mean, mean=tp.mean, n=tp.n),
        running=RunningFigures(last=run.last, window=run.window_mean, n=run.n),
        warning=warning,
        brief=brief,
        more=_added(m),
    )


def segment_verdict(stats: SourceStats) -> dict[str, Any] | None:
    """The newest measured segment against the one before (as ``summary``'s segment_comparison)."""
    measured = measured_segments(stats)  # a synthetic acceptance run is never compared
    if len(measured) < 2:
        return None
    before, after = measured[-2], measured[-1]
    c = compare_accept_len(before.all, after.all)
    d = c.to_dict()
    d["segments"] = [before.index, after.index]
    return d


def verdict_text(c: dict[str, Any], a_name: str = "A", b_name: str = "B") -> str:
    words = {
        "higher": f"{b_name} higher",
        "lower": f"{b_name} lower",
        "no_difference": "no significant difference",
        "insufficient": "insufficient data",
    }[c["verdict"]]
    if c.get("diff") is None or not c.get("ci95"):
        return f"{words} ({c.get('reason') or 'not enough data'})"
    lo, hi = c["ci95"]
    return f"{number(c['diff'], signed=True)} (95% CI {number(lo, signed=True)} … {number(hi, signed=True)}): {words}"


def estimator_words(c: dict[str, Any], quantity: str = "accept_len") -> str:
    """Which estimator a comparison of ``quantity`` used, in words ("pooled: 1 + Σaccepted/Σdrafts"
    for accept len, "pooled: Σaccepted/Σdrafted" for accept rate)."""
    words = RATE_ESTIMATOR_WORDS if quantity == "accept_rate" else ESTIMATOR_WORDS
    return words.get(c.get("estimator") or "mean_of_lines", "")


def short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


_UNSTABLE = re.compile(r"(?:([AB]): )?level not stable \(switches between ~([\d.]+) and ~([\d.]+),")
_FEW_STRETCHES = re.compile(
    r"(?:([AB]): )?consecutive records are strongly correlated[^;]*?about (\d+) independent"
)
_SHORT_OF = re.compile(
    r"(?:([AB]): )?n=\d+ but consecutive values are strongly correlated[^;]*; wait for ~(\d+) more"
)


def insufficient_short(reason: str) -> str:
    """The advice of an "insufficient" reason in a few words: ``A ~200 more records`` (each side
    that must wait, from :func:`tui.core.stats.compare.short_of`), ``B level not stable (~2.25 /
    ~2.58)`` (a level that switched too few times to average out), else the reason itself."""
    found = _SHORT_OF.findall(reason or "")
    if not found:
        levels = _UNSTABLE.findall(reason or "")
        if len(levels) == 1:  # the two levels kept, the advice in the long form
            side, lo, hi = levels[0]
            return f"{side + ' ' if side else ''}level not stable (~{lo} / ~{hi})"
        if levels:
            return "levels not stable (" + ", ".join(f"{s} ~{lo}/~{hi}" for s, lo, hi in levels) + ")"
        stretches = _FEW_STRETCHES.findall(reason or "")
        if stretches:
            return ", ".join(
                f"{side + ' ' if side else ''}~{n} independent stretches" for side, n in stretches
            )
        return reason
    return ", ".join(f"{side + ' ' if side else ''}~{int(n):,} more records" for side, n in found)


def verdict_forms(c: dict[str, Any], b_name: str = "B") -> tuple[str, ...]:
    """A verdict's text, longest first (:func:`verdict_text`), each whole: the numbers are never
    cut, the shorter forms leave words out (``insufficient: A ~200 more records``), never the
    advice on how many records to wait for."""
    long = verdict_text(c, b_name=b_name)
    words = VERDICT_WORDS[c["verdict"]].replace("B ", f"{b_name} ", 1)
    if c.get("diff") is None or not c.get("ci95"):
        advice = insufficient_short(c.get("reason") or "")
        forms = [long, f"{words.split(' ')[0]}: {advice}" if advice else words]  # the advice kept
    else:
        forms = [long, f"{number(c['diff'], signed=True)}: {words}"]
    return tuple(dict.fromkeys(forms))


def raw_vs_adjusted(raw: dict[str, Any], adj: dict[str, Any], b_name: str = "B") -> str:
    """Why the raw verdict and the one at equal batch size differ, in one line (empty when they
    agree): ``raw: insufficient (A strongly correlated); at equal batch size: fixed higher``."""
    if raw["verdict"] == adj["verdict"]:
        return ""
    names = {"higher": f"{b_name} higher", "lower": f"{b_name} lower"}
    said = names.get(raw["verdict"], VERDICT_WORDS[raw["verdict"]].replace(" data", ""))
    sides = [side or "A or B" for side, _ in _SHORT_OF.findall(raw.get("reason") or "")]
    if raw["verdict"] == "insufficient" and sides:
        said += f" ({' and '.join(sides)} strongly correlated)"
    adj_words = names.get(adj["verdict"], VERDICT_WORDS[adj["verdict"]])
    return f"raw: {said}; at equal batch size: {adj_words}"


def warning_forms(warning: str) -> tuple[str, ...]:
    """A sample warning, longest first; the short form keeps how many records to wait for
    (``strongly correlated: ~220 more records``), or what comes before the first aside."""
    m = re.search(r"wait for (~[\d,]+ more records)", warning)
    if m is None:  # else the words before the first aside (a server's note says what, then why)
        head = warning.split(" (", 1)[0]
        return (warning, head) if head != warning else (warning,)
    return (warning, f"strongly correlated: {m.group(1)}", f"wait for {m.group(1)}")
