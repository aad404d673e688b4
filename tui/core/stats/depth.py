"""The draft depth k read off a run of records (drafted tokens / drafts when whole, see
:meth:`tui.core.stats.segments.Segment._learn_k`)."""

from __future__ import annotations

from tui.core.formats import registry
from tui.core.model.columns import RecordColumns
from tui.core.stats.checks import all_nan


def ratio_k(cols: RecordColumns) -> tuple[int, int] | None:
    """(index, k) of the first record whose drafted tokens / drafts is a whole number."""
    if cols.cumulative or not registry.get(cols.family).drafts_from_depth:
        return None
    nd = cols.values["num_drafts"]
    if all_nan(nd):  # no drafts printed: no ratio (found at C speed, not record by record)
        return None
    for i, (x, y) in enumerate(zip(nd, cols.values["drafted"])):
        if x > 0 and y == y and abs(y / x - round(y / x)) < 1e-6:
            return i, round(y / x)
    return None


def running_k(cols: RecordColumns, k_before: int | None) -> list[int]:
    """The depth k as known at each record of a run, learned record by record as
    :meth:`Segment._learn_k` learns it over the whole run (0: none known yet): what a record's
    drafts are completed with does not depend on where a reader cut the records into runs."""
    cur = k_before or 0
    ratio = ratio_k(cols)
    pp = cols.per_position
    out = []
    for i in range(cols.n):
        row = pp[i] if pp is not None else None
        if row and cur < len(row) <= 64:
            cur = len(row)
        if ratio is not None and i == ratio[0] and cur < ratio[1] <= 64:
            cur = ratio[1]
        out.append(cur)
    return out
