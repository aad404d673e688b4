"""A segment's release era, decided once per server run from evidence (docs/formats.md, "Eras").

Some releases print a number on another scale than the others with the very same text (vLLM
before 0.9 printed its mean acceptance length without the bonus token). A family says so as data:
a shape's ``sum_match`` puts each line's evidence in a column (which declared offset its value
exceeds the sum of its list by), and its ``[[eras]]`` say which index each era's lines show, what
a printed value of the era lacks (``shift``) and the note its rate definition carries.

The era is the segment's, never one line's:

* from the version the segment's startup lines print, where there is one (its ``since`` /
  ``until``);
* else from the weight of evidence: the era whose index more than half of the segment's lines
  with evidence show, else the newest era. It is settled once ``SETTLE_LINES`` lines have been
  seen; until then (a live source that has printed a few lines) it is the newest era, and the
  lines read under it when the settled one differs are counted. A whole read
  (``SourceStats.hold_eras``: ``summary``) holds a segment's runs back until its era is settled
  (or the segment ends: then decided on all its lines), so a segment that starts at the end of a
  chunk is read as one that starts at the beginning of one: the result does not depend on where
  the chunks were cut, nor on how many threads read them.

A line that disagrees with its segment's era keeps its printed value (shifted only by the era's
shift, like every line of the segment) and is counted: ``diagnostics`` says how many. Nothing here
changes how a log is read: the scanners read every line, whatever its evidence.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import TYPE_CHECKING, Literal

from tui.core.formats import registry
from tui.core.formats.family_data import Era, SumMatch, sum_match
from tui.core.model.columns import RecordColumns
from tui.core.model.records import Record

if TYPE_CHECKING:
    from tui.core.stats.precompute import Precomputed
    from tui.core.stats.segments import SourceStats

SETTLE_LINES = 10  # lines of evidence after which an era read off the lines is settled
HOLD_MAX = 200_000  # records a whole read holds back at most while a segment's era is not settled


@dataclass(frozen=True, slots=True)
class EraRule:
    """What a family's data says about the eras of one record kind."""

    decl: SumMatch
    eras: tuple[Era, ...]  # those whose lines show a sum_match index, in the order declared


@cache
def rule_of(family: str | None, kind: str) -> EraRule | None:
    data = getattr(registry.get(family), "data", None)
    if data is None:
        return None
    decl = next((s.sum_match for s in data.shapes if s.kind == kind and s.sum_match is not None), None)
    eras = tuple(e for e in data.eras if e.sum_match is not None)
    return EraRule(decl, eras) if decl is not None and eras else None


def _release(text: str | None) -> tuple[int, ...] | None:
    m = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    return None if m is None else tuple(int(g) for g in m.groups() if g is not None)


def era_of_version(rule: EraRule, version: str | None) -> Era | None:
    """The era a release belongs to (None: the version says nothing, or no era holds it)."""
    v = _release(version)
    if v is None:
        return None
    for e in rule.eras:
        lo, hi = _release(e.since), _release(e.until)
        if (lo is None or v >= lo) and (hi is None or v < hi):
            return e
    return None


class EraTally:
    """The evidence of one segment's lines and the era decided from it."""

    __slots__ = ("applied", "by", "counted", "era", "lines", "rule", "settled", "votes")

    def __init__(self, rule: EraRule) -> None:
        self.rule = rule
        self.votes = [0] * (len(rule.decl.offsets) + 1)  # lines by evidence index (last: none)
        self.lines = 0  # lines with evidence
        self.era: Era | None = None
        self.settled = False
        self.by = ""  # "version 0.8.5" when a version line decided it, else "" (the lines did)
        self.applied: dict[str, int] = {}  # era name -> lines read under it
        self.counted: set[int] = set()  # runs whose evidence came in ahead (ids; see foresee)

    def observe(self, evidence: Sequence[float], n: int, version: str | None) -> Era:
        """A run of ``n`` records (``evidence``: their sum_match values, NaN: none) goes into the
        segment: the era they are read under."""
        self.count(evidence)
        if not self.settled:
            self._decide(version)
        assert self.era is not None
        self.applied[self.era.name] = self.applied.get(self.era.name, 0) + n
        return self.era

    def count(self, evidence: Sequence[float]) -> None:
        for j in range(len(self.votes)):
            c = evidence.count(float(j))  # an array or a list
            self.votes[j] += c
            self.lines += c

    def foresee(self, evidence: Sequence[float], version: str | None) -> None:
        """Evidence of runs about to come (a scanned chunk's, whose first record goes in apart):
        counted now, so that the era they are read under is the whole chunk's."""
        self.count(evidence)
        self._decide(version)

    def settle(self, version: str | None) -> None:
        """Decide now, on the evidence seen (a whole file's segment that ended, or held long)."""
        self._decide(version, final=True)

    def _decide(self, version: str | None, *, final: bool = False) -> None:
        by_version = era_of_version(self.rule, version)
        if by_version is not None:
            self.era, self.settled, self.by = by_version, True, f"version {version}"
            return
        eras = self.rule.eras
        newest = next((e for e in eras if e.until is None), eras[-1])
        self.settled = final or self.lines >= SETTLE_LINES
        best = next((e for e in eras if 2 * self.votes[e.sum_match or 0] > self.lines), None)
        # until settled, the newest era: a few lines never move a segment off it
        self.era = best if best is not None and self.settled else newest
        self.by = ""

    def disagreeing(self) -> int:
        """Lines whose evidence is not the era's."""
        if self.era is None:
            return 0
        return self.lines - self.votes[self.era.sum_match or 0]

    def misread(self) -> int:
        """Lines read under an era other than the settled one (before it was settled)."""
        if self.era is None:
            return 0
        return sum(n for name, n in self.applied.items() if name != self.era.name)

    def diagnostic(self) -> dict | None:
        if self.era is None:
            return None
        off = self.disagreeing()
        late = self.misread()
        if not off and not late:
            return None
        by = self.by or f"{self.votes[self.era.sum_match or 0]:,} of {self.lines:,} lines show it"
        words = [
            f"{off:,} of {self.lines:,} lines disagree with the segment's era "
            f"({self.era.name}: {self.era.evidence}; decided by {by}): their printed values are kept"
        ]
        if late:
            words.append(f"{late:,} lines were read before the era was settled, under another one")
        return {
            "code": "era_disagreement",
            "level": "info" if not late and 2 * off < self.lines else "warning",
            "message": "; ".join(words),
            "era": self.era.name,
            "decided_by": by,
            "lines": self.lines,
            "disagreeing": off,
            "read_before_settled": late,
        }


def evidence_of_columns(cols: RecordColumns, rule: EraRule) -> Sequence[float]:
    """Each record's sum_match: the scanners' column, else from its value and list."""
    col = cols.values.get(rule.decl.column)
    if col is not None and any(x == x for x in col):
        return col
    return _evidence(cols.values[rule.decl.value], cols.per_position, rule.decl)


def evidence_of_records(run: Sequence[Record], rule: EraRule) -> list[float]:
    """Each record's sum_match: what the parser kept of the line (``more``, as the scanners' column
    holds it), else from its value and list (a record made elsewhere)."""
    d = rule.decl
    out = []
    for r in run:
        kept = r.more.get(d.column) if r.more else None
        if kept is not None:
            out.append(kept)
        elif (v := getattr(r, d.value)) is not None:
            out.append(sum_match(v, r.per_position or (), d.within, d.per_item, d.offsets))
        else:
            out.append(float("nan"))
    return out


def _evidence(
    values: Sequence[float], pp: Sequence[tuple[float, ...] | None] | None, d: SumMatch
) -> list[float]:
    if pp is None:
        return [float("nan")] * len(values)
    return [sum_match(v, p or (), d.within, d.per_item, d.offsets) for v, p in zip(values, pp)]


def shifted(col: array, by: float) -> array:
    """``col`` on the era's scale (NaN stays NaN): rounded to the nearest double of a printed
    decimal, so 0.67 + 1 is 1.67 on every path."""
    return array("d", [round(x + by, 9) if x == x else x for x in col])


def shift_records(run: Sequence[Record], era: Era) -> None:
    """The records of a run on the era's scale, their printed value kept in ``extra``."""
    assert era.shift is not None
    name, by = era.shift.column, era.shift.by
    for r in run:
        v = getattr(r, name)
        if v is not None and v == v:
            r.extra[f"{name}_printed"] = repr(v)
            r.extra[f"{name}_scale"] = era.note or era.name
            setattr(r, name, round(v + by, 9))


# -- a source's segments and their eras (SourceStats calls these) -------------------------------
def onto_era_scale(stats: SourceStats, cols: RecordColumns) -> bool:
    """A run of columns about to go into the current segment, put on its era's scale in place
    before any check sees the values: True when a column was shifted."""
    rule = rule_of(cols.family, cols.kind)
    if rule is None:
        return False
    ahead = _counted_ahead(stats, cols)
    era = _era(stats, rule, () if ahead else evidence_of_columns(cols, rule), cols.n)
    if era.shift is None:
        return False
    name = era.shift.column
    cols.values[name] = shifted(cols.values[name], era.shift.by)
    return True


def records_onto_era_scale(stats: SourceStats, run: Sequence[Record]) -> None:
    """The same for parsed records (their printed value kept in ``extra``)."""
    rule = rule_of(run[0].family, run[0].kind)
    if rule is not None:
        ahead = _counted_ahead(stats, run)
        era = _era(stats, rule, () if ahead else evidence_of_records(run, rule), len(run))
        if era.shift is not None:
            shift_records(run, era)


def _counted_ahead(stats: SourceStats, run: object) -> bool:
    """Whether the run's evidence came in ahead (:func:`foresee`, :func:`_hold`): then it is not
    counted again (and no longer marked)."""
    tally = stats.current.era
    if tally is None or id(run) not in tally.counted:
        return False
    tally.counted.discard(id(run))
    return True


def foresee(stats: SourceStats, runs: Sequence[RecordColumns]) -> None:
    """Runs about to go in one after the other in the current segment (a scanned chunk's): while
    the segment's era is not settled, their evidence is weighed together before the first of them
    is read (one run: nothing to weigh)."""
    for cols in runs if len(runs) > 1 else ():
        rule = rule_of(cols.family, cols.kind)
        if rule is None or not cols.n:
            continue
        seg = stats.current
        if seg.era is None:
            seg.era = EraTally(rule)
        if seg.era.settled:
            return
        seg.era.foresee(evidence_of_columns(cols, rule), seg.config.version)
        seg.era.counted.add(id(cols))
        seg.cached_rate_def = None


def _era(stats: SourceStats, rule: EraRule, evidence: Sequence[float], n: int) -> Era:
    """The era of the current segment once this run's evidence is in."""
    seg = stats.current
    if seg.era is None:
        seg.era = EraTally(rule)
    settled = seg.era.settled
    era = seg.era.observe(evidence, n, seg.config.version)
    if not settled:
        seg.cached_rate_def = None  # its note follows the era
    return era


# -- a whole read holds a segment's runs until its era is settled -------------------------------
def hold_columns(
    stats: SourceStats,
    cols: RecordColumns,
    raws: Sequence[str] | None,
    reduced: Precomputed | None,
    era_read: bool,
) -> bool:
    """True when the run of columns is held back (see :func:`_hold`)."""
    rule = _holding(stats, cols.family, cols.kind)
    if rule is False:
        return False
    put = partial(stats.add_columns, cols, raws, reduced, era_read=era_read)
    return _hold(stats, rule, put, cols, cols.n, lambda r: evidence_of_columns(cols, r))


def hold_records(stats: SourceStats, run: list[Record]) -> bool:
    """True when the run of parsed records is held back (see :func:`_hold`)."""
    rule = _holding(stats, run[0].family, run[0].kind)
    if rule is False:
        return False
    put = partial(stats.feed_records, run)
    return _hold(stats, rule, put, run, len(run), lambda r: evidence_of_records(run, r))


def _holding(stats: SourceStats, family: str | None, kind: str) -> EraRule | None | Literal[False]:
    """False when a run of ``kind`` goes in at once: nothing is held and the current segment's
    era is settled, or its version decides it, or the run's kind has no era; else its rule (None:
    a kind with no era, held behind the runs held before it)."""
    rule = rule_of(family, kind)
    if stats.held is None:
        seg = stats.current
        if rule is None or (seg.era is not None and seg.era.settled):
            return False
        if era_of_version(rule, seg.config.version) is not None:
            return False  # the version decides it at once
        stats.held = []
    return rule


def _hold(
    stats: SourceStats,
    rule: EraRule | None,
    put: Callable[[], None],
    run: object,
    n: int,
    evidence: Callable[[EraRule], Sequence[float]],
) -> bool:
    """The run held back (``put``: how it goes in later, :func:`release`) while the current
    segment's era is not settled: its evidence is counted now; once the era is settled (or
    ``HOLD_MAX`` records wait), everything held goes in under it, in line order."""
    seg = stats.current
    assert stats.held is not None
    if rule is not None:
        tally = seg.era = seg.era or EraTally(rule)
        if id(run) not in tally.counted:  # (not foreseen already)
            tally.foresee(evidence(rule), seg.config.version)
            tally.counted.add(id(run))
        seg.cached_rate_def = None
    stats.held.append(put)
    stats.held_records += n
    if (seg.era is not None and seg.era.settled) or stats.held_records > HOLD_MAX:
        release(stats)
    return True


def release(stats: SourceStats) -> None:
    """Everything held goes into the current segment, in line order, under its era (decided
    now, on what was seen, when it is not settled yet)."""
    held, stats.held, stats.held_records = stats.held, None, 0
    if not held:
        return
    seg = stats.current
    if seg.era is not None and not seg.era.settled:
        seg.era.settle(seg.config.version)
        seg.cached_rate_def = None
    for put in held:
        put()
