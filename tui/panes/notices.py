"""What a pane says in a notification (pure Python: no Textual here): :class:`Notice`, and the
conditions the screen's tick checks on a pane's statistics (:func:`segment_notices`)."""

from __future__ import annotations

from dataclasses import dataclass

from tui.core.model.sanitize import number
from tui.core.stats import SourceStats
from tui.core.stats.compare import ESTIMATOR_WORDS, compare_accept_len
from tui.core.stats.verdicts import measured_segments

MAX_NOTICES = 32  # kept per pane until the screen takes them


@dataclass(slots=True)
class Notice:
    severity: str  # "information", "warning", "error"
    title: str
    message: str


def segment_notices(
    stats: SourceStats, label: str, said_significant: set[tuple[int, int]], said_stuck: set[int]
) -> list[Notice]:
    """A significant change of accept len between the last two measured segments, and accept
    len stuck at 1.00 with a draft model configured (or drafts made), each said once (the sets
    remember what was said)."""
    out: list[Notice] = []
    measured = measured_segments(stats)  # a synthetic acceptance run is never compared
    if len(measured) >= 2:
        before, after = measured[-2], measured[-1]
        key = (before.index, after.index)
        if key not in said_significant:
            c = compare_accept_len(before.all, after.all)
            if c.verdict in ("higher", "lower") and c.ci95 is not None:
                said_significant.add(key)
                lo, hi = c.ci95
                out.append(
                    Notice(
                        "information" if c.verdict == "higher" else "warning",
                        f"{label}: segment {after.index} accept len is {c.verdict}",
                        f"{number(c.mean_b)} vs {number(c.mean_a)} in segment {before.index}: "
                        f"{number(c.diff, signed=True)} (95% CI {number(lo, signed=True)} … "
                        f"{number(hi, signed=True)}; {ESTIMATOR_WORDS[c.estimator]})",
                    )
                )
    cur = stats.current
    if cur.config.synthetic and (cur.index, -1) not in said_significant:
        said_significant.add((cur.index, -1))  # (segment, -1): its synthetic warning was said
        out.append(
            Notice(
                "warning",
                f"{label}: segment {cur.index} acceptance is SYNTHETIC",
                f"{cur.config.synthetic}; no verdict or alert uses it",
            )
        )
    why = cur.no_draft_accepted() if cur.index not in said_stuck else None
    drafted = cur.all.pooled_rate.denominator > 0  # counts prove drafting is on
    if why is not None and (cur.config.speculative or drafted):
        said_stuck.add(cur.index)
        where = (
            f"a draft model is configured ({cur.config.label()})"
            if cur.config.speculative
            else "drafts are made"
        )
        out.append(
            Notice(
                "error",
                f"{label}: no draft is being accepted",
                f"segment {cur.index}: {why} although {where}: likely a misconfiguration",
            )
        )
    return out
