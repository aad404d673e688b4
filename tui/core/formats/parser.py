"""The line parser of one source: offers each line to the registered families
(:mod:`tui.core.formats.registry`) in order; each finds its lines by their message anchor (never
by one prefix: forks and logging configs change prefixes). It keeps the little state lines need
from earlier lines: each family's own (``Format.new_state``: a line a later one pairs with,
cumulative counters, an open multi-line block, ...), hard-wrapped args dumps, timestamps
without a year.

``feed`` never raises: any unexpected failure on a line is reported as :class:`Malformed`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from tui.core.formats import grammar, markers, registry
from tui.core.formats.plugin import NOT_MINE, Format, Found, Line
from tui.core.formats.text import clean
from tui.core.formats.timestamps import TimestampReader
from tui.core.model.records import Item, Malformed, Marker, Oversized, Record, metrics_item
from tui.core.sources.base import LineBatch
from tui.core.sources.lines import OVERSIZED_LEAD, oversized_bytes

MAX_CONTINUATION = 256 * 1024  # cap on a hard-wrapped args dump being re-joined


class LineParser:
    """Parses the lines of one source into :mod:`tui.core.model.records` items."""

    def __init__(
        self, source: str, *, year: int | None = None, ref_time: float | Literal["now"] | None = "now"
    ) -> None:
        """``year`` / ``ref_time``: where year-less stamps get their year (see
        :class:`TimestampReader`): a file's mtime; "now" for a live source; None: no year known."""
        self.source = source
        self.family: str | None = None  # the first family seen
        self.lines = 0
        self._ts = TimestampReader(year, ref_time)
        self._formats: tuple[Format, ...] = tuple(registry.FORMATS)
        self._states: dict[str, Any] = {f.name: f.new_state() for f in self._formats}
        self._anchors = grammar.ANCHORS + tuple(grammar.EXTRA_ANCHORS)
        self._metrics_family = registry.metrics_default() or ""
        self._ends_args = tuple(a for f in self._formats for a in f.ends_wrapped_args)
        # (kind, joined text, family, reader) of a hard-wrapped args dump being re-joined
        self._pending_args: tuple[str, str, str, Callable[[str], dict[str, Any]]] | None = None
        self._block: Format | None = None  # the family whose multi-line block is open

    @property
    def idle(self) -> bool:
        """True when no hard-wrapped args dump or multi-line block is pending: a chunk may then
        skip this parser (what a scanned chunk's records need from earlier lines is settled by
        the family's plug-in, ``Format.settle_scan``, with :meth:`state_of` and :attr:`timestamps`)."""
        return self._pending_args is None and self._block is None

    def state_of(self, family: str) -> Any:
        """The cross-line state of ``family``'s lines in this source (``Format.new_state``)."""
        return self._states.get(family)

    def set_reference(self, ref_time: float) -> None:
        """The year of year-less stamps comes from ``ref_time`` (the file's mtime, from
        its ``opened`` event) rather than from the clock: an old log keeps its own year."""
        self._ts.set_reference(ref_time)

    def reset(self) -> None:
        """Forget cross-line state (after truncation, rotation, a switch to a newer file)."""
        for f in self._formats:
            f.reset(self._states[f.name])
        self._pending_args = None
        self._block = None

    def feed_batch(self, batch: LineBatch) -> list[Item]:
        if batch.kind == "metrics":
            return self._metrics_batch(batch)
        out: list[Item] = []
        no = batch.first_line_no
        for line, off in zip(batch.lines, batch.offsets):
            item = self.feed(line, no, off)
            if item is not None:
                out.append(item)
            no += 1
        return out

    def feed(self, line: str, line_no: int, offset: int) -> Item | None:
        self.lines += 1
        try:
            return self._parse(line, line_no, offset)
        except Exception as exc:  # never raise on input; say what happened instead
            return Malformed(
                self.source, line_no, offset, f"parser error: {type(exc).__name__}: {exc}", line[:4096]
            )

    def _parse(self, line: str, line_no: int, offset: int) -> Item | None:
        if self._pending_args is not None:
            nbytes = oversized_bytes(line)
            if nbytes is not None:
                self._pending_args = None
                return Oversized(self.source, line_no, offset, nbytes)
            cont = self._continue_args(line, line_no, offset)
            if cont is not None:
                return cont
        if self._block is not None:
            done, got = self._block.block_line(self._states[self._block.name], self.source, line)
            if not done:
                return None
            self._block = None
            if got is not None:
                return got
        if not any(a in line for a in self._anchors):
            # an oversized line stands in as "\n<bytes>" (see tui.core.sources.lines)
            nbytes = oversized_bytes(line) if line[:1] == OVERSIZED_LEAD else None
            return None if nbytes is None else Oversized(self.source, line_no, offset, nbytes)
        text = clean(line)
        ln = Line(self.source, line_no, offset, text, line, self._ts)
        for f in self._formats:
            state = self._states[f.name]
            item = f.parse(state, ln)
            if item is not NOT_MINE:
                if f.busy(state):  # the line opened a block: the next lines are its
                    self._block = f
                return self._stamp(f, item, text)
        return self._marker(text, line, line_no, offset)

    def _marker(self, text: str, line: str, line_no: int, offset: int) -> Marker | None:
        found, by = self._first(lambda f: f.marker(text))
        if found is None:
            found = markers.detect(text)
        if found is None:
            found, by = self._first(lambda f: f.loose_marker(text))
        if found is None:
            return None
        kind, family, config, version = found
        for f in self._formats:  # a (re)started server counts from zero
            f.restarted(self._states[f.name])
        wrapped = by.wrapped_markers.get(kind) if by is not None else None
        if by is not None and wrapped is not None:
            start, reader = wrapped
            tail = text[text.find(start) :] if start else text  # the dump starts at its text
            if not tail.rstrip().endswith(")") and not tail.rstrip().endswith("}"):
                self._pending_args = (kind, tail, by.name, reader)
        if family and self.family is None:
            self.family = family
        return Marker(self.source, line_no, offset, family, kind, line, self._ts.read(text), config, version)

    def _first(self, ask: Callable[[Format], Found | None]) -> tuple[Found | None, Format | None]:
        """The first family's answer that is not None, and that family."""
        for f in self._formats:
            found = ask(f)
            if found is not None:
                return found, f
        return None, None

    def _metrics_batch(self, batch: LineBatch) -> list[Item]:
        """Records that a metrics source already computed, one JSON object per line (a record
        without a family is the one whose data says so: the first metrics source wrote none)."""
        out: list[Item] = []
        for i, (line, off) in enumerate(zip(batch.lines, batch.offsets)):
            no = batch.first_line_no + i
            self.lines += 1
            item: Item
            try:
                item = metrics_item(self.source, no, off, line, self._metrics_family)
            except (ValueError, TypeError) as exc:
                item = Malformed(self.source, no, off, f"bad metrics record: {exc}", line[:4096])
            if isinstance(item, Record) and self.family is None:
                self.family = item.family
            out.append(item)
        return out

    @property
    def timestamps(self) -> TimestampReader:
        return self._ts

    def _stamp(self, fmt: Format, item: Item | None, text: str) -> Item | None:
        if isinstance(item, Record):
            item.timestamp = self._ts.read(text)
            if item.timestamp is None and fmt.elapsed_clock:
                item.elapsed = self._ts.elapsed(text)
            if self.family is None:
                self.family = item.family
            m = fmt.sum_matches.get(item.kind)
            if m is not None and item.per_position:  # the era evidence the scanners' column holds
                v = getattr(item, m.value)
                if v is not None:
                    item.more = {**(item.more or {}), m.column: m.of(v, item.per_position)}
        return item

    def _continue_args(self, line: str, line_no: int, offset: int) -> Marker | None:
        """A hard-wrapped args dump goes on until a line with its own prefix or the closer."""
        kind, joined, family, reader = self._pending_args  # type: ignore[misc]
        s = line.strip()
        if not s or s.startswith("[") or self._ts.read(s) is not None or len(joined) > MAX_CONTINUATION:
            self._pending_args = None
            return None
        if any(a in s for a in self._ends_args):
            self._pending_args = None
            return None
        joined += s
        done = s.endswith(")") or s.endswith("}")
        self._pending_args = None if done else (kind, joined, family, reader)
        return Marker(
            self.source, line_no, offset, family, kind, line, None, reader(joined), None, continuation=True
        )
