"""Drafts per line where the draft length varies (docs/formats.md, "Drafts when the draft length
varies").

A family whose lines print drafted tokens but not drafts derives the drafts as drafted tokens /
k (a shape's ``per_list_item``), which holds only while every draft has k tokens. With dynamic
speculative decoding (vLLM 0.33's ``num_speculative_tokens_per_batch_size``; the n-gram and
suffix proposers) drafts are shorter, so drafted / k undercounts them and the pooled accept length
``1 + Σaccepted / Σdrafts`` comes out far too high. The printed mean (``1 + accepted / drafts``,
rounded) says which holds: a shape's ``drafts_from_mean`` names the columns.

* A run of a segment is tested as a whole: Σ drafts x (mean - 1) equals Σ accepted within the
  rounding of the means (``within`` x Σ drafts) while drafts = drafted / k holds. The test is a
  few passes over the columns at C speed, so a log read at full speed stays so.
* While the segment's era is not settled (stats/eras.py: the first lines of a live source are
  read under the newest era, whose scale may not be theirs), a run that holds on the scale of an
  era the segment may yet settle on holds; one that holds on no era's scale breaks it, as it
  would once settled (so the drafts do not depend on how the lines were cut into runs).
* A line missing its mean, accepted or drafts (``nan``) says nothing: it is left out of the test
  (one such line no longer lets a whole run pass).
* Once a run of a segment breaks it, the segment's drafts are its lines' ``accepted / (mean -
  1)`` from then on (the earlier runs held within the rounding). A line that cannot tell (its mean
  within the rounding of 1 while it accepted tokens) gets no drafts: it is left out of the pooled
  length (not of the pooled rate, which needs no drafts), and counted.
* ``method`` says which was done, for the pooled length's ``method``.
"""

from __future__ import annotations

import math
import operator
from array import array
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from tui.core.formats import registry
from tui.core.formats.family_data import DraftsFromMean
from tui.core.model.columns import RecordColumns

if TYPE_CHECKING:
    from tui.core.stats.segments import Segment

FIXED = "drafts = drafted tokens / k"


@cache
def rule_of(family: str | None, kind: str) -> DraftsFromMean | None:
    data = getattr(registry.get(family), "data", None)
    if data is None:
        return None
    return next(
        (s.drafts_from_mean for s in data.shapes if s.kind == kind and s.drafts_from_mean is not None), None
    )


@dataclass(slots=True)
class DraftTally:
    """One segment's lines whose drafts came from their printed mean."""

    varies: bool = False  # a run broke drafts = drafted / k
    lines: int = 0  # lines read since, with drafts from their mean
    unknown: int = 0  # of those, lines whose mean cannot tell their drafts (left out)

    def method(self) -> str:
        if not self.varies:
            return FIXED
        words = (
            "the draft length varies (drafted tokens / k breaks the printed mean): drafts = accepted / "
            f"(printed mean - 1) on {self.lines:,} lines"
        )
        if self.unknown:
            words += f"; {self.unknown:,} lines whose mean cannot tell their drafts are left out"
        return words


def holds(cols: RecordColumns, rule: DraftsFromMean, shift: float = 0.0) -> bool:
    """Whether the run's derived drafts agree with its printed means (``shift``: the means read
    on another era's scale, by that much more). Lines missing one of the three values say
    nothing and are left out of the sums; True where no line can tell."""
    mean, acc, nd = (cols.values.get(c) for c in (rule.mean, rule.accepted, rule.drafts))
    if mean is None or acc is None or nd is None:
        return True
    total_nd, dot, total_acc = math.fsum(nd), sum(map(operator.mul, nd, mean)), math.fsum(acc)
    if total_nd != total_nd or dot != dot or total_acc != total_acc:  # a value missing: not at C speed
        rows = [(d, m, a) for d, m, a in zip(nd, mean, acc) if d == d and m == m and a == a]
        if not rows:
            return True
        total_nd = math.fsum(d for d, _, _ in rows)
        dot = sum(d * m for d, m, _ in rows)
        total_acc = math.fsum(a for _, _, a in rows)
    gap = total_acc - (dot + (shift - 1.0) * total_nd)  # Σ accepted - Σ drafts x (mean - 1)
    return abs(gap) <= rule.within * total_nd + 1e-6 * max(1.0, total_nd)


def _may_hold(seg: Segment, cols: RecordColumns, rule: DraftsFromMean) -> bool:
    """Whether drafted / k may still hold for the run: it holds on the segment's era's scale,
    or, while that era is not settled (its first lines are read under the newest era), on the
    scale of an era it may yet settle on."""
    if holds(cols, rule):
        return True
    tally = seg.era
    if tally is None or tally.settled or tally.era is None:
        return False
    here = tally.era.shift.by if tally.era.shift is not None else 0.0
    others = {e.shift.by if e.shift is not None else 0.0 for e in tally.rule.eras} - {here}
    return any(holds(cols, rule, by - here) for by in others)


def onto_drafts(seg: Segment, cols: RecordColumns) -> bool:
    """The run's drafts column as the segment's lines say (in place): True when it was replaced."""
    rule = rule_of(cols.family, cols.kind)
    if rule is None or rule.drafts not in cols.values:
        return False
    tally = seg.drafts
    if not tally.varies and _may_hold(seg, cols, rule):
        return False
    tally.varies = True
    mean, acc = cols.values[rule.mean], cols.values[rule.accepted]
    out = array("d", bytes(8 * cols.n))
    nan = math.nan
    for i, (m, a) in enumerate(zip(mean, acc)):
        out[i] = a / (m - 1) if m - 1 > rule.within and a == a else nan
    tally.lines += cols.n
    tally.unknown += sum(1 for x in out if x != x)
    cols.values[rule.drafts] = out
    return True
