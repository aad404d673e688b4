"""One source from its batches to its statistics and status: :class:`Driver`.

Every flow uses it: ``stream``, ``export`` and ``summary`` of a metrics source
(:class:`tui.core.pipeline.follow.Followed`, a Driver that also notes arrivals), the app's panes
(:class:`tui.panes.state.PaneState`, a Driver that also keeps the recent points, marks and held
lines) and ``summary`` of a whole file (:class:`tui.core.pipeline.whole.Summarizer` reads chunks
and hands the driver parsed items and scanned runs). Records enter the statistics one way
(``SourceStats.add_columns``, through :meth:`Driver.fold` or :meth:`Driver.add_run`), and the
status follows :mod:`tui.core.pipeline.status`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from tui.core.formats import LineParser
from tui.core.model.columns import RecordColumns
from tui.core.model.records import Item, Marker
from tui.core.pipeline.status import Change, Status, after_end, after_event, after_lines
from tui.core.sources.base import Batch, EventKind, LineBatch, SourceEvent
from tui.core.sources.logset import NOT_TEXT_SHARE, SNIFF_BYTES
from tui.core.stats import SourceStats
from tui.core.stats.checks import record_refusals

if TYPE_CHECKING:
    from tui.core.stats.precompute import Precomputed
    from tui.core.stats.segments import Segment

SNIFF_CHARS = SNIFF_BYTES  # of a live source's first lines, looked at for binary content
SNIFF_MIN = 64  # judged once this many are seen (a short first line says little)


class Driver:
    """One source's line parser, statistics and status.

    ``ref_time``: where vLLM's year-less stamps get their year: "now" for a live source (an
    ``opened`` event with the file's mtime sets it), a file's mtime, None: no year known."""

    def __init__(
        self, name: str, label: str | None = None, *, ref_time: float | Literal["now"] | None = "now"
    ) -> None:
        self.name = name
        self.label = label or name
        self._ref_time = ref_time
        self.status = Status.CONNECTING
        self.status_message = ""
        self.error: str | None = None  # the fatal error, when the source failed
        self.lines = 0  # lines fed through feed() / parse()
        self.parser = LineParser(name, ref_time=ref_time)
        self.stats = SourceStats(name, self.label)
        self._sniffed = [0, 0]  # characters of the first lines looked at, and how many not text

    def reset(self) -> None:
        """New parser and statistics (a seek back in a replay starts over)."""
        self.parser = LineParser(self.name, ref_time=self._ref_time)
        self.stats = SourceStats(self.name, self.label)

    # -- in ---------------------------------------------------------------------------------
    def feed(self, batch: Batch) -> list[tuple[Item, int]]:
        """Feed one batch (an event goes to :meth:`on_event`); returns the items it held, each
        with the segment it went to."""
        if isinstance(batch, SourceEvent):
            self.on_event(batch)
            return []
        return self.fold(self.parse(batch))

    def parse(self, batch: LineBatch) -> list[Item]:
        """A batch of lines through the parser (not yet into the statistics: :meth:`fold`)."""
        self.count_lines(len(batch.lines))
        if batch.kind == "log" and self._sniffed[0] < SNIFF_CHARS:
            self._sniff(batch.lines)
        return self.parser.feed_batch(batch)

    def _sniff(self, lines: Sequence[str]) -> None:
        """The first lines' characters: a source whose start is mostly control characters and
        bytes that are not UTF-8 (``watch /bin/ls``) is not a text log, said as a fatal error
        (by the rule of :func:`tui.core.sources.logset.looks_binary`)."""
        seen = self._sniffed
        text = "\n".join(lines)[: SNIFF_CHARS - seen[0]]
        seen[0] += len(text) + 1
        seen[1] += sum(1 for ch in text if (ch < " " and ch not in "\t\f\b\x1b") or ch == "\ufffd")
        if seen[0] >= SNIFF_MIN and seen[1] / seen[0] > NOT_TEXT_SHARE and self.error is None:
            self._apply(Change(Status.ERROR, "not a text log: binary content in its first bytes", True))

    def count_lines(self, n: int) -> None:
        """``n`` lines arrived (parsed by :meth:`parse`, or read whole by a scanner): counted, and
        the status is live again unless the source has ended or failed for good."""
        self.lines += n
        self._apply(after_lines(self.status, self.error is not None))

    def fold(self, items: Sequence[Item]) -> list[tuple[Item, int]]:
        """Parsed items in line order into the statistics, each with the segment it went to.
        Between markers items go in together (runs of records become columns); a marker alone,
        as it may open a segment."""
        out: list[tuple[Item, int]] = []
        start = 0
        for i, it in enumerate(items):
            if isinstance(it, Marker):
                self._fold_part(items[start:i], out)
                self._fold_part(items[i : i + 1], out)
                start = i + 1
        self._fold_part(items[start:], out)
        return out

    def _fold_part(self, items: Sequence[Item], out: list[tuple[Item, int]]) -> None:
        if items:
            self.stats.feed(items)
            seg = self.stats.segment_index
            self.folded(items, seg)
            out.extend((it, seg) for it in items)

    def add_run(
        self, cols: RecordColumns, raws: Sequence[str] | None = None, reduced: Precomputed | None = None
    ) -> None:
        """A run of records already in columns (a scanned buffer), with its reduction when it was
        reduced where it was scanned (see :mod:`tui.core.stats.precompute`)."""
        self.stats.add_columns(cols, raws, reduced)
        self.folded_run(cols, self.stats.segment_index)

    def segment(self, index: int) -> Segment | None:
        """Segment ``index`` of this source, when it is still kept."""
        for seg in reversed(self.stats.segments):
            if seg.index == index:
                return seg
        return None

    def depth(self, index: int) -> int | None:
        """The draft depth k known for segment ``index`` (None: unknown)."""
        seg = self.segment(index)
        return seg.depth() if seg is not None else None

    def refusals(self, rec: Any, index: int) -> dict[str, str]:
        """field -> reason for each value of ``rec`` (in segment ``index``) that the statistics
        refuse: the one rule (:func:`tui.core.stats.checks.record_refusals`) every consumer uses."""
        return record_refusals(rec, self.depth(index))

    def folded(self, items: Sequence[Item], seg: int) -> None:
        """Called after ``items`` went into segment ``seg`` (a subclass keeps what it shows)."""

    def folded_run(self, cols: RecordColumns, seg: int) -> None:
        """Called after the run ``cols`` went into segment ``seg``."""

    def on_event(self, ev: SourceEvent) -> Change | None:
        """A source event: the parser and statistics first (a new file, a reset, a restart), then
        the status it implies; returns the status change, if any."""
        if ev.kind == EventKind.SEEK and ev.data.get("reset"):
            self.reset()
        elif ev.changes_file:  # the new file's lines do not continue the old one's (same segment)
            self.parser.reset()
        if ev.kind == EventKind.OPENED and isinstance(ev.data.get("mtime"), (int, float)):
            self.parser.set_reference(float(ev.data["mtime"]))  # a local file: vLLM's year is its year
        self.stats.on_event(ev)
        change = after_event(ev, self.status)
        self._apply(change)
        return change

    def finished(self, error: str | None = None) -> Change | None:
        """The source's iterator ended (``error``: the source's own ``error`` attribute, or why
        it raised)."""
        change = after_end(self.status, self.status_message, error, self.error is not None)
        self._apply(change)
        return change

    def _apply(self, change: Change | None) -> None:
        if change is not None:
            self.status, self.status_message = change.status, change.message
            if change.fatal:
                self.error = change.message
