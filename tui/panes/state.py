"""What one pane knows about its source, in bounded memory (pure Python: no Textual here).

The source worker hands every batch to :meth:`PaneState.feed_lines` (a live write or two:
:meth:`PaneState.hold`, folded at the screen's next tick; a replay's whole buffer:
:meth:`PaneState.feed_buffer`) and every event to :meth:`PaneState.on_event`; the screen renders
from this object a few times a second. The history and the raw tail are made when read, so lines
that a flood pushes out before then cost little. A pane is a :class:`tui.core.pipeline.driver.Driver`
(the parser, the statistics and the status of ``specwatch stream`` and ``summary``, fed the same
way), so the numbers on screen are the numbers of ``specwatch summary --json`` for the same input.
On top of them this keeps, for charts, the log tail and the CSV export:

* ``history``: the most recent records as small :class:`Point` tuples (``HISTORY`` of them);
* ``boundaries``: where each segment started in that history;
* ``marks``: user markers (``m``);
* ``file_marks``: file changes (truncated, rotated, switched): chart marks, not segments;
* ``raw``: the last ``RAW_TAIL`` lines of the log, tagged metric / marker / malformed / event;
* ``notices``: things worth a notification (:mod:`tui.panes.notices`; the screen drains them at
  its tick).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tui.core.model.columns import RecordColumns
from tui.core.model.records import Item, Malformed, Marker, Record
from tui.core.pipeline.driver import Driver
from tui.core.pipeline.logclock import LogClock, duration
from tui.core.pipeline.status import Change, Status
from tui.core.sources.base import Batch, EventKind, LineBatch, SourceEvent
from tui.core.stats.segments import Segment
from tui.panes.history import HISTORY, RAW_TAIL, History, Point, RawLine, RawTail, added_values
from tui.panes.notices import MAX_NOTICES, Notice, segment_notices

if TYPE_CHECKING:
    from tui.core.pipeline.whole import Summarizer

__all__ = ["HISTORY", "RAW_TAIL", "Notice", "PaneState", "Point", "RawLine"]

LIVE_QUIET_S = 5.0  # a live source quiet this long says how long: "live (last line 7 s ago)"


class PaneState(Driver):
    """One source's driver (parser, statistics, status) with what a pane adds: the recent
    history, the raw tail, marks, held lines and notices."""

    def __init__(self, label: str, where: str = "", *, replay: bool = False, source: Any = None) -> None:
        self.where = where
        self.replay = replay
        self.source = source  # the Source object (replay control), when the app opened it
        self._history = History()  # the newest records, for the charts and the CSV export
        self._raw = RawTail()  # the newest lines, for the log tail
        self.marks: deque[tuple[int, int, str]] = deque(maxlen=100)  # (seq, number, text)
        self.file_marks: deque[tuple[int, str]] = deque(maxlen=100)  # (seq, "truncated" / ...)
        self.clock = LogClock()  # the newest line's own timestamp (idle by the log's clock)
        self.notices: deque[Notice] = deque(maxlen=MAX_NOTICES)
        self.attempt = 0
        self.last_data: float | None = None  # monotonic time of the last line
        self.version = 0  # bumped on every change: the screen re-renders only what changed
        self._whole_buffer: Summarizer | None = (
            None  # whole buffers (tui.panes.whole_buffer), made when one comes
        )
        self._held: list[tuple[LineBatch, float, float]] = []  # (batch, wall, monotonic): see hold()
        self.held_lines = 0
        self._tags: dict[int, str] = {}  # line number -> metric / marker / malformed, for the tail
        self._rewound = False  # a jump back: the next batch's lines replace the tail's from there on
        self.fed_end = 0  # the offset after the last line in the statistics
        super().__init__(label, label)
        self._reset_pane()

    def reset(self) -> None:
        """A replay's jump back: the statistics start over and the file is read again from its
        start to the target. The lines counted start over too, and the log tail keeps what it has:
        the next batch (the file read again) replaces the tail from its first line on, so no line
        is in the tail twice (:meth:`_tail`)."""
        super().reset()
        self.lines = 0
        self.fed_end = 0
        self._rewound = True
        self._reset_pane()

    def _reset_pane(self) -> None:
        self._history.clear()
        self.file_marks.clear()
        self.boundaries: deque[tuple[int, int]] = deque(maxlen=500)  # (first seq, segment index)
        self.seq = 0
        self._seen_segment = 0
        self._said_significant: set[tuple[int, int]] = set()
        self._said_stuck: set[int] = set()
        self.version += 1

    # -- feeding ----------------------------------------------------------------------------
    def feed(self, batch: Batch) -> list[tuple[Item, int]]:
        """An event (:meth:`on_event`) or a batch of lines (:meth:`feed_lines`) at once."""
        if isinstance(batch, SourceEvent):
            self.on_event(batch)
            return []
        self.flush()
        return self._feed([(batch, time.time(), time.monotonic())])

    def feed_lines(self, batch: LineBatch) -> None:
        """Parse a batch of lines into the statistics and the recent history."""
        self.feed(batch)

    def hold(self, batch: LineBatch) -> None:
        """Keep a small batch of a live source until :meth:`flush` (the screen flushes every pane
        at its tick, before it draws): the lines that arrive one write at a time between two
        ticks go into the statistics as one run, not one each, and nothing is shown later for it.
        Anything else that comes (an event, a mark, a batch that does not continue the held ones)
        flushes them first, so the order of everything is kept."""
        if self._held:
            last = self._held[-1][0]
            if (batch.path, batch.kind, batch.first_line_no) != (
                last.path,
                last.kind,
                last.first_line_no + len(last.lines),
            ):
                self.flush()
        self._held.append((batch, time.time(), time.monotonic()))
        self.held_lines += len(batch.lines)

    def flush(self) -> None:
        """Feed the held batches (see :meth:`hold`)."""
        if self._held:
            held, self._held = self._held, []
            self.held_lines = 0
            self._feed(held)

    def _feed(self, batches: list[tuple[LineBatch, float, float]]) -> list[tuple[Item, int]]:
        """Consecutive batches of one file, each with its arrival (wall, monotonic)."""
        items: list[Item] = []
        for batch, wall, mono in batches:
            items += self.parse(batch)
            self._arrived(batch, wall, mono)
        out = self.fold(items)
        tags, self._tags = self._tags, {}
        for batch, _, _ in batches:
            self._tail(batch, tags)
        self.version += 1
        return out

    def feed_buffer(self, batch: LineBatch) -> bool:
        """The whole buffer of a batch that has one (``batch.data``: a replay at full speed) through
        the whole-buffer scanner, as ``summary`` reads it (:mod:`tui.panes.whole_buffer`); the same
        statistics, history and tail as :meth:`feed_lines`. False (nothing done) when the scanner
        refuses it: then the caller feeds its lines."""
        if batch.data is None or batch.kind != "log" or not batch.lines:
            return False
        from tui.panes import whole_buffer  # the summary machinery: loaded when the first buffer comes

        sc = whole_buffer.scan(self, batch.data)
        if sc is None:
            return False
        self.flush()
        if self._whole_buffer is None:
            self._whole_buffer = whole_buffer.reader(self)
        self.count_lines(len(batch.lines))
        self._arrived(batch, time.time(), time.monotonic())
        whole_buffer.fold(self._whole_buffer, sc, batch.data, batch.offsets[0], batch.first_line_no)
        tags, self._tags = self._tags, {}
        self._tail(batch, tags)
        self.version += 1
        return True

    def _arrived(self, batch: LineBatch, wall: float, mono: float) -> None:
        self.last_data = mono
        if batch.offsets:  # where the lines in the statistics end (a replay's progress: read_progress)
            self.fed_end = batch.offsets[-1] + len(batch.lines[-1]) + 1
        if not self.replay:  # a replay is not live: its status is the playhead, not an age
            self.clock.observe(batch, wall, mono)

    def folded(self, items: Sequence[Item], seg: int) -> None:
        """Parsed items went into segment ``seg``: records become points of the history (one
        request is not an interval: not a point), and every item its line's tag."""
        self._note_segment(seg)
        tags = self._tags
        for it in items:
            if isinstance(it, Record):
                if it.kind != "request":
                    self._point(it, seg)
                tags[it.line_no] = "metric"
            elif isinstance(it, Marker):
                tags[it.line_no] = "marker"
            elif isinstance(it, Malformed):
                tags[it.line_no] = "malformed"

    def folded_run(self, cols: RecordColumns, seg: int) -> None:
        """A run of records already in columns (a scanned buffer) went into segment ``seg``: the
        history gets its newest ``HISTORY`` points, the tags its newest ``RAW_TAIL`` lines."""
        self._note_segment(seg)
        nos = cols.line_nos
        if nos is not None:
            base = cols.line_base
            for x in nos[-RAW_TAIL:]:
                self._tags[base + int(x)] = "metric"
        if cols.kind == "request" or not cols.n:  # not points of the charts (see folded)
            return
        self._history.add_run(cols, self.seq, seg, self.depth(seg))  # Points made when read
        self.seq += cols.n

    @property
    def history(self) -> deque[Point]:
        """The newest ``HISTORY`` records as Points, oldest first."""
        return self._history.points()

    def _point(self, r: Record, seg: int) -> None:
        """A record as a point of the charts; a value the statistics refuse is a gap there too
        (no scale, sparkline, chart or alert sees it: the one rule, :meth:`Driver.refusals`)."""
        self.seq += 1
        bad = self.refusals(r, seg)
        self.history.append(
            Point(
                self.seq,
                r.line_no,
                None if "timestamp" in bad else r.timestamp,
                seg,
                r.rank,
                None if "accept_len" in bad else r.accept_len,
                None if "accept_rate" in bad else r.accept_rate,
                None if "throughput" in bad else r.throughput,
                None if "running_req" in bad else r.running_req,
                added_values(r, bad),
            )
        )

    def _note_segment(self, index: int) -> None:
        """Remember where a segment starts in the history (its first record comes next)."""
        if index == self._seen_segment:
            return
        self._seen_segment = index
        self.boundaries.append((self.seq + 1, index))
        seg = self.segment(index)
        if seg is not None and index > 0:
            self.notices.append(
                Notice(
                    "information",
                    f"{self.label}: new segment {index}",
                    f"opened by {seg.reason}" + self._config_note(seg),
                )
            )

    @staticmethod
    def _config_note(seg: Segment) -> str:
        label = seg.label or seg.config.label()
        return "" if label == "config unknown" else f" — {label}"

    def _tail(self, batch: LineBatch, tags: dict[int, str]) -> None:
        if self._rewound:
            self._rewound = False
            self._drop_from(batch.first_line_no)
        self._raw.add_lines(batch.lines, batch.first_line_no, tags)

    def _drop_from(self, line_no: int) -> None:
        """The tail without its lines numbered ``line_no`` or later and what came between them
        (they come again as the replay reads on); the notes after the newest line (the jump's own
        "seek" line) are kept, after the lines kept."""
        raw = self._raw.lines()
        kept = list(raw)
        first = next((i for i, r in enumerate(kept) if r.line_no is not None and r.line_no >= line_no), None)
        if first is None:
            return
        last = max(i for i, r in enumerate(kept) if r.line_no is not None)
        raw.clear()
        raw.extend(kept[:first] + kept[last + 1 :])

    @property
    def raw(self) -> deque[RawLine]:
        """The last ``RAW_TAIL`` lines (and events, marks) of the log, oldest first."""
        return self._raw.lines()

    def note_raw(self, text: str, kind: str = "event") -> None:
        self.flush()  # the lines held before it first
        self._raw.note(text, kind)
        self.version += 1

    @property
    def raw_seq(self) -> int:
        return self._raw.seq

    def on_event(self, ev: SourceEvent) -> Change | None:
        """A source event: the driver's (statistics first, then the status it implies), then what
        the pane shows of it (file marks, the raw tail, notices)."""
        self.flush()
        kind, before = ev.kind, self.status
        if ev.changes_file:
            self.clock.file_changed()
            what = (
                f"switched to {ev.path.rsplit('/', 1)[-1]}"
                if kind == EventKind.SWITCHED and ev.path
                else kind.value
            )
            self.file_marks.append((self.seq, what))
        change = super().on_event(ev)
        if ev.opens_segment:
            self._note_segment(self.stats.current.index)
        if kind == EventKind.STDERR:
            lines = ev.data.get("lines") or [ev.message]
            for line in lines[-50:]:
                self.note_raw(str(line), "stderr")
            return change
        if kind != EventKind.SEEK or ev.message:
            self.note_raw(f"── {kind.value}: {ev.message}" if ev.message else f"── {kind.value}", "event")
        if kind == EventKind.OPENED:
            self.clock.opened(ev.data.get("size"), time.monotonic())
        self._event_notices(ev, before)
        self.version += 1
        return change

    def _event_notices(self, ev: SourceEvent, before: Status) -> None:
        kind, title = ev.kind, self.label
        if kind in (EventKind.OPENED, EventKind.CONNECTED):
            self.attempt = 0
            if kind == EventKind.CONNECTED and before == Status.RECONNECTING:
                self.notices.append(Notice("information", f"{title}: connected again", ev.message))
        elif kind == EventKind.IDLE and not self.replay:
            self.notices.append(Notice("warning", f"{title}: idle", ev.message or "no new line"))
        elif kind == EventKind.RECONNECTING:
            self.attempt = int(ev.data.get("attempt") or self.attempt + 1)
            if self.attempt == 1:
                self.notices.append(Notice("warning", f"{title}: connection lost", ev.message))
        elif kind == EventKind.WAITING and ev.data.get("reason") == "slow_start":  # said once a link
            self.notices.append(Notice("warning", f"{title}: waiting for the host", ev.message))
        elif kind == EventKind.ERROR:
            self.notices.append(Notice("error", f"{title}: error", ev.message))
        elif kind == EventKind.EXITED and ev.data.get("returncode"):
            self.notices.append(Notice("error", f"{title}: command ended", ev.message))

    def finished(self, error: str | None = None) -> Change | None:
        """The source's iterator ended (or raised)."""
        self.flush()
        change = super().finished(error)
        if change is not None and change.fatal:
            self.notices.append(Notice("error", f"{self.label}: error", change.message))
        self.version += 1
        return change

    on_finished = finished  # the screen's name for it

    def mark_restart(self) -> None:
        """The user says: I restarted the server now (manual segment boundary). In a replay "now"
        is the log's time: the newest record's own timestamp, when it has one."""
        at = self.log_time() if self.replay else None
        if at is None:
            self.on_event(SourceEvent(self.label, EventKind.RESTARTED, "restart marked by you"))
            return
        when = time.strftime("%H:%M:%S", time.gmtime(at))  # naive seconds: the log's own fields
        msg = f"restart marked by you at {when} by the log's clock"
        self.on_event(SourceEvent(self.label, EventKind.RESTARTED, msg, time=at))

    def log_time(self) -> float | None:
        """The newest record's own timestamp (naive seconds, as the log prints it), or None."""
        self.flush()
        return next((p.timestamp for p in reversed(self.history) if p.timestamp is not None), None)

    def add_mark(self, number: int, text: str) -> None:
        self.flush()  # the mark comes after every line that came before it
        self.marks.append((self.seq, number, text))
        self.note_raw(f"── mark {number}: {text}", "mark")

    # -- reading ----------------------------------------------------------------------------
    def read_progress(self) -> float:
        """How far through its file a replay's statistics are (0..1): the lines fed into them,
        not those its source has read ahead (``--max`` reads the file in large batches)."""
        src = self.source
        at = getattr(src, "progress_at", None)
        if at is not None:
            return float(at(self.fed_end))
        return float(getattr(src, "progress", 0.0))

    def _own_words(self, message: str) -> str:
        """A status message without the pane's own source in front (``host:/dir/server.log: the
        host has not …``): the pane's title names it, and a narrow header keeps the words that say
        why. Another file's name stays."""
        src = getattr(self.source, "name", None)  # host:/dir/server.log (the pane: label, where)
        for own in (self.name, self.label, src):
            if own and message.startswith(f"{own}: ") and len(message) > len(own) + 2:
                return message[len(own) + 2 :]
        return message

    def status_text(
        self, now: float | None = None, wall: float | None = None, progress: float | None = None
    ) -> str:
        """The header status, always true at the moment it is read. ``now``: time.monotonic();
        ``wall``: time.time() at the same moment (derived from ``now`` when not given);
        ``progress``: a replay's progress as the numbers on screen show it (default: as fed).

        "idle for" / "live (last line … ago)" count from the newest line's own timestamp when it
        has a date and the clocks agree (:class:`tui.core.pipeline.logclock.LogClock`), saying "by the
        log's clock" when that is older than the line's arrival (an old file); otherwise from the
        arrival, saying so when the log's clock disagrees."""
        mono = time.monotonic()
        now = mono if now is None else now
        wall = time.time() + (now - mono) if wall is None else wall
        src = self.source
        if self.status == Status.IDLE and self.last_data is not None:
            age, how = self._quiet(now, wall)
            return f"idle for {duration(age)}{how}"
        if self.status == Status.RECONNECTING:
            return f"reconnecting (attempt {self.attempt})"
        if self.status == Status.ERROR:
            return f"error ({self._own_words(self.status_message or self.error or '')})"
        if self.status == Status.WAITING:
            return f"waiting ({self._own_words(self.status_message)})" if self.status_message else "waiting"
        if self.replay and src is not None and self.status in (Status.LIVE, Status.CONNECTING):
            speed = getattr(src, "speed", None)
            pace = "max" if speed is None else f"{speed:g}×"
            pct = f" {int((self.read_progress() if progress is None else progress) * 100)}%"
            if getattr(src, "seeking", False):
                return f"seeking{pct}"
            if getattr(src, "paused", False):
                return f"paused{pct}"
            return f"replaying {pace}{pct}"
        if self.status == Status.LIVE and self.last_data is not None and not self.replay:
            quiet, how = self._quiet(now, wall)
            return "live" if quiet < LIVE_QUIET_S else f"live (last line {duration(quiet)} ago{how})"
        return self.status.value

    def _quiet(self, now: float, wall: float) -> tuple[float, str]:
        """Seconds since the newest line, and how they were counted (a suffix; "" when by arrival
        and nothing needs saying)."""
        assert self.last_data is not None
        arrival = max(0.0, now - self.last_data)
        if self.replay:
            return arrival, ""
        by_log = self.clock.age(wall)
        if by_log is not None:
            return by_log, (", by the log's clock" if by_log - arrival > 60 else "")
        skew = self.clock.skew
        if skew is not None:
            off = "ahead" if skew < 0 else "behind"
            off_by = duration(60.0 * round(abs(skew) / 60.0))  # to the minute: zones differ by hours
            return arrival, f", by arrival: the log's clock is {off_by} {off}"
        return arrival, ""

    def check(self) -> None:
        """Conditions noticed on the tick (:func:`tui.panes.notices.segment_notices`)."""
        self.notices.extend(segment_notices(self.stats, self.label, self._said_significant, self._said_stuck))

    def take_notices(self) -> list[Notice]:
        out = list(self.notices)
        self.notices.clear()
        return out
