"""What one pane knows about its source, in bounded memory (pure Python: no Textual here).

The source worker hands every batch to :meth:`PaneState.feed_lines` (a live write or two:
:meth:`PaneState.hold`, folded at the screen's next tick; a replay's whole buffer:
:meth:`PaneState.feed_buffer`) and every event to :meth:`PaneState.on_event`; the screen renders
from this object a few times a second. The history and the raw tail are made when read, so lines
that a flood pushes out before then cost little. The statistics are the core's
(:class:`tui.core.stats.SourceStats` fed by :class:`tui.core.formats.LineParser`, exactly as
``specwatch stream`` and ``summary`` feed them), so the numbers on screen are the numbers of
``specwatch summary --json`` for the same input. On top of them this keeps, for charts, the log
tail and the CSV export:

* ``history``: the most recent records as small :class:`Point` tuples (``HISTORY`` of them);
* ``boundaries``: where each segment started in that history;
* ``marks``: user markers (``m``);
* ``file_marks``: file changes (truncated, rotated, switched): chart marks, not segments;
* ``raw``: the last ``RAW_TAIL`` lines of the log, tagged metric / marker / malformed / event;
* ``notices``: things worth a notification (the screen drains them at its tick).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui.core.formats import LineParser
from tui.core.model.columns import RecordColumns
from tui.core.model.records import Item, Malformed, Marker, Record
from tui.core.model.sanitize import number
from tui.core.pipeline.logclock import LogClock, duration
from tui.core.sources.base import EventKind, LineBatch, SourceEvent
from tui.core.stats import SourceStats
from tui.core.stats.compare import ESTIMATOR_WORDS, compare_accept_len
from tui.core.stats.segments import Segment
from tui.panes.recent import HISTORY, RAW_TAIL, History, Point, RawLine, RawTail

__all__ = ["HISTORY", "RAW_TAIL", "Notice", "PaneState", "Point", "RawLine"]

if TYPE_CHECKING:
    from tui.panes.bulk import BulkFeeder

MAX_NOTICES = 32


@dataclass(slots=True)
class Notice:
    severity: str  # "information", "warning", "error"
    title: str
    message: str


# Statuses, as shown in the pane header.
CONNECTING, LIVE, IDLE, WAITING, RECONNECTING, ERROR, ENDED = (
    "connecting",
    "live",
    "idle",
    "waiting",
    "reconnecting",
    "error",
    "ended",
)


class PaneState:
    """One source's parser, statistics, recent history and status."""

    def __init__(self, label: str, where: str = "", *, replay: bool = False, source: Any = None) -> None:
        self.label = label
        self.where = where
        self.replay = replay
        self.source = source  # the Source object (replay control), when the app opened it
        self._history = History()  # the newest records, for the charts and the CSV export
        self._raw = RawTail()  # the newest lines, for the log tail
        self.marks: deque[tuple[int, int, str]] = deque(maxlen=100)  # (seq, number, text)
        self.file_marks: deque[tuple[int, str]] = deque(maxlen=100)  # (seq, "truncated" / ...)
        self.clock = LogClock()  # the newest line's own timestamp (idle by the log's clock)
        self.notices: deque[Notice] = deque(maxlen=MAX_NOTICES)
        self.status = CONNECTING
        self.status_message = ""
        self.attempt = 0
        self.error: str | None = None
        self.last_data: float | None = None  # monotonic time of the last line
        self.idle_since: float | None = None
        self.lines = 0
        self.version = 0  # bumped on every change: the screen re-renders only what changed
        self._bulk: BulkFeeder | None = None  # whole buffers (tui.panes.bulk), made when one comes
        self._held: list[tuple[LineBatch, float, float]] = []  # (batch, wall, monotonic): see hold()
        self.held_lines = 0
        self._reset_stats()

    def _reset_stats(self) -> None:
        self.parser = LineParser(self.label)
        self.stats = SourceStats(self.label, self.label)
        self._history.clear()
        self.file_marks.clear()
        self.boundaries: deque[tuple[int, int]] = deque(maxlen=500)  # (first seq, segment index)
        self.seq = 0
        self._seen_segment = 0
        self._said_significant: set[tuple[int, int]] = set()
        self._said_stuck: set[int] = set()
        self.version += 1

    # -- feeding ----------------------------------------------------------------------------
    def feed_lines(self, batch: LineBatch) -> None:
        """Parse a batch of lines into the statistics and the recent history."""
        self.flush()
        self._feed([(batch, time.time(), time.monotonic())])

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

    def _feed(self, batches: list[tuple[LineBatch, float, float]]) -> None:
        """Consecutive batches of one file, each with its arrival (wall, monotonic)."""
        items: list[Item] = []
        for batch, wall, mono in batches:
            items += self.parser.feed_batch(batch)
            self._arrived(batch, wall, mono)
        tags: dict[int, str] = {}
        self.fold_items(items, tags)
        for batch, _, _ in batches:
            self._tail(batch, tags)
        self.version += 1

    def feed_buffer(self, batch: LineBatch) -> bool:
        """The whole buffer of a batch that has one (``batch.data``: a replay at full speed) through
        the whole-buffer scanner, as ``summary`` reads it (:mod:`tui.panes.bulk`); the same
        statistics, history and tail as :meth:`feed_lines`. False (nothing done) when the scanner
        refuses it: then the caller feeds its lines."""
        if batch.data is None or batch.kind != "log" or not batch.lines:
            return False
        from tui.panes import bulk as pane_bulk  # the summary machinery: loaded when the first buffer comes

        sc = pane_bulk.scan(self, batch.data)
        if sc is None:
            return False
        self.flush()
        if self._bulk is None:
            self._bulk = pane_bulk.BulkFeeder(self)
        self._arrived(batch, time.time(), time.monotonic())
        tags: dict[int, str] = {}
        self._bulk.fold(sc, batch.data, batch.offsets[0], batch.first_line_no, tags)
        self._tail(batch, tags)
        self.version += 1
        return True

    def _arrived(self, batch: LineBatch, wall: float, mono: float) -> None:
        self.lines += len(batch.lines)
        self.last_data = mono
        if not self.replay:  # a replay is not live: its status is the playhead, not an age
            self.clock.observe(batch, wall, mono)
        if self.status in (CONNECTING, IDLE, WAITING, RECONNECTING) or (
            self.status == ERROR and not self._fatal
        ):
            self.status, self.status_message, self.idle_since = LIVE, "", None

    def fold_items(self, items: Iterable[Item], tags: dict[int, str]) -> None:
        """Parsed items in line order into the statistics, the history and ``tags`` (line number
        -> metric / marker / malformed)."""
        stats = self.stats
        run: list[Record] = []  # consecutive records: they go into the statistics as columns
        for it in items:
            if isinstance(it, Record):
                run.append(it)
                continue
            if run:
                self._fold(run, tags)
                run = []
            stats.feed((it,))
            self._note_segment(stats.current.index)
            if isinstance(it, Marker):
                tags[it.line_no] = "marker"
            elif isinstance(it, Malformed):
                tags[it.line_no] = "malformed"
        if run:
            self._fold(run, tags)

    def _fold(self, recs: list[Record], tags: dict[int, str]) -> None:
        """Add a run of consecutive records (no marker between them) to the statistics, through
        the same entry point as ``summary`` (:meth:`SourceStats.feed` → ``add_columns``)."""
        seg = self.stats.current
        self._note_segment(seg.index)
        self.stats.feed(recs)
        index = seg.index
        for r in recs:
            if r.kind != "request":  # one request is not an interval: not a point of the charts
                self._point(r, index)
            tags[r.line_no] = "metric"

    def fold_columns(self, cols: RecordColumns, raws: Sequence[str] | None, tags: dict[int, str]) -> None:
        """A run of records already in columns (a scanned buffer): the statistics take it as it is;
        the history gets its newest ``HISTORY`` points, ``tags`` its newest ``RAW_TAIL`` lines."""
        index = self.stats.current.index
        self._note_segment(index)
        self.stats.add_columns(cols, raws)
        n = cols.n
        nos = cols.line_nos
        if nos is not None:
            base = cols.line_base
            for x in nos[-RAW_TAIL:]:
                tags[base + int(x)] = "metric"
        if cols.kind == "request" or not n:  # not points of the charts (see _fold)
            return
        self._history.add_run(cols, self.seq, index)  # Points made when the history is read
        self.seq += n

    @property
    def history(self) -> deque[Point]:
        """The newest ``HISTORY`` records as Points, oldest first."""
        return self._history.points()

    def _point(self, r: Record, seg: int) -> None:
        self.seq += 1
        self.history.append(
            Point(
                self.seq,
                r.line_no,
                r.timestamp,
                seg,
                r.rank,
                r.accept_len,
                r.accept_rate,
                r.throughput,
                r.running_req,
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
        self._raw.add_lines(batch.lines, batch.first_line_no, tags)

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

    @property
    def _fatal(self) -> bool:
        return self.error is not None

    def on_event(self, ev: SourceEvent) -> None:
        """A source event: statistics first (new segments), then the status it implies."""
        self.flush()
        kind = ev.kind
        if kind == EventKind.SEEK and ev.data.get("reset"):
            self._reset_stats()
        elif ev.changes_file:  # the new file's lines do not continue the old one's
            self.parser.reset()
            self.clock.file_changed()
            what = (
                f"switched to {ev.path.rsplit('/', 1)[-1]}"
                if kind == EventKind.SWITCHED and ev.path
                else kind.value
            )
            self.file_marks.append((self.seq, what))
        self.stats.on_event(ev)
        if ev.opens_segment:
            self._note_segment(self.stats.current.index)
        if kind == EventKind.STDERR:
            lines = ev.data.get("lines") or [ev.message]
            for line in lines[-50:]:
                self.note_raw(str(line), "stderr")
            return
        if kind != EventKind.SEEK or ev.message:
            self.note_raw(f"── {kind.value}: {ev.message}" if ev.message else f"── {kind.value}", "event")
        if kind == EventKind.OPENED:
            self.clock.opened(ev.data.get("size"), time.monotonic())
            if isinstance(ev.data.get("mtime"), (int, float)):  # a local file: vLLM's year is its year
                self.parser.set_reference(float(ev.data["mtime"]))
        if kind in (EventKind.OPENED, EventKind.CONNECTED):
            if kind == EventKind.CONNECTED and self.status == RECONNECTING:
                self.notices.append(Notice("information", f"{self.label}: connected again", ev.message))
            self.status, self.status_message, self.idle_since = LIVE, "", None
            self.attempt = 0
        elif kind == EventKind.IDLE:
            self.status = IDLE
            self.idle_since = self.last_data if self.last_data is not None else time.monotonic()
            if not self.replay:
                self.notices.append(Notice("warning", f"{self.label}: idle", ev.message or "no new line"))
        elif kind == EventKind.WAITING:
            self.status, self.status_message = WAITING, ev.message
        elif kind == EventKind.RECONNECTING:
            self.status = RECONNECTING
            self.attempt = int(ev.data.get("attempt") or self.attempt + 1)
            self.status_message = ev.message
            if self.attempt == 1:
                self.notices.append(Notice("warning", f"{self.label}: connection lost", ev.message))
        elif kind == EventKind.ERROR:
            fatal = bool(ev.data.get("fatal"))
            if fatal:
                self.error = ev.message
            self.status, self.status_message = ERROR, ev.message
            self.notices.append(Notice("error", f"{self.label}: error", ev.message))
        elif kind in (EventKind.EOF, EventKind.EXITED):
            if self.status != ERROR:
                self.status, self.status_message = ENDED, ev.message
            if kind == EventKind.EXITED and ev.data.get("returncode"):
                self.error = ev.message
                self.status, self.status_message = ERROR, ev.message
                self.notices.append(Notice("error", f"{self.label}: command ended", ev.message))
        elif kind == EventKind.SEEK:
            self.status, self.status_message = LIVE, ""
        self.version += 1

    def on_finished(self, error: str | None = None) -> None:
        """The source's iterator ended (or raised)."""
        self.flush()
        if error and self.error is None:
            self.error = error
            self.status, self.status_message = ERROR, error
            self.notices.append(Notice("error", f"{self.label}: error", error))
        elif self.status != ERROR:
            self.status = ENDED
        self.version += 1

    def mark_restart(self) -> None:
        """The user says: I restarted the server now (manual segment boundary)."""
        self.on_event(SourceEvent(self.label, EventKind.RESTARTED, "restart marked by you"))

    def add_mark(self, number: int, text: str) -> None:
        self.flush()  # the mark comes after every line that came before it
        self.marks.append((self.seq, number, text))
        self.note_raw(f"── mark {number}: {text}", "mark")

    # -- reading ----------------------------------------------------------------------------
    def segment(self, index: int) -> Segment | None:
        for seg in reversed(self.stats.segments):
            if seg.index == index:
                return seg
        return None

    def status_text(self, now: float | None = None, wall: float | None = None) -> str:
        """The header status, always true at the moment it is read. ``now``: time.monotonic();
        ``wall``: time.time() at the same moment (derived from ``now`` when not given).

        "idle for" / "live (last line … ago)" count from the newest line's own timestamp when it
        has a date and the clocks agree (:class:`tui.core.pipeline.logclock.LogClock`), saying "by the
        log's clock" when that is older than the line's arrival (an old file); otherwise from the
        arrival, saying so when the log's clock disagrees."""
        mono = time.monotonic()
        now = mono if now is None else now
        wall = time.time() + (now - mono) if wall is None else wall
        src = self.source
        if self.status == IDLE and self.last_data is not None:
            age, how = self._quiet(now, wall)
            return f"idle for {duration(age)}{how}"
        if self.status == RECONNECTING:
            return f"reconnecting (attempt {self.attempt})"
        if self.status == ERROR:
            return f"error ({self.status_message or self.error})"
        if self.status == WAITING:
            return f"waiting ({self.status_message})" if self.status_message else "waiting"
        if self.replay and src is not None and self.status in (LIVE, CONNECTING):
            speed = getattr(src, "speed", None)
            pace = "max" if speed is None else f"{speed:g}×"
            pct = f" {getattr(src, 'progress', 0.0) * 100:.0f}%"
            if getattr(src, "seeking", False):
                return f"seeking{pct}"
            if getattr(src, "paused", False):
                return f"paused{pct}"
            return f"replaying {pace}{pct}"
        if self.status == LIVE and self.last_data is not None and not self.replay:
            quiet, how = self._quiet(now, wall)
            return "live" if quiet < 5 else f"live (last line {duration(quiet)} ago{how})"
        return self.status

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
        """Conditions noticed on the tick: a significant change between segments, accept len
        stuck at 1.00 with a draft model configured."""
        measured = [s for s in self.stats.segments if s.all.accept_len.n or s.all.pooled_len.n]
        if len(measured) >= 2:
            before, after = measured[-2], measured[-1]
            key = (before.index, after.index)
            if key not in self._said_significant:
                c = compare_accept_len(before.all, after.all)
                if c.verdict in ("higher", "lower") and c.ci95 is not None:
                    self._said_significant.add(key)
                    lo, hi = c.ci95
                    self.notices.append(
                        Notice(
                            "information" if c.verdict == "higher" else "warning",
                            f"{self.label}: segment {after.index} accept len is {c.verdict}",
                            f"{number(c.mean_b)} vs {number(c.mean_a)} in segment {before.index}: "
                            f"{number(c.diff, signed=True)} (95% CI {number(lo, signed=True)} … "
                            f"{number(hi, signed=True)}; {ESTIMATOR_WORDS[c.estimator]})",
                        )
                    )
        cur = self.stats.current
        why = cur.no_draft_accepted() if cur.index not in self._said_stuck else None
        drafted = cur.all.pooled_rate.denominator > 0  # counts prove drafting is on
        if why is not None and (cur.config.speculative or drafted):
            self._said_stuck.add(cur.index)
            where = (
                f"a draft model is configured ({cur.config.label()})"
                if cur.config.speculative
                else "drafts are made"
            )
            self.notices.append(
                Notice(
                    "error",
                    f"{self.label}: no draft is being accepted",
                    f"segment {cur.index}: {why} although {where}: likely a misconfiguration",
                )
            )

    def take_notices(self) -> list[Notice]:
        out = list(self.notices)
        self.notices.clear()
        return out
