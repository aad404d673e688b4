"""The main screen: one pane per source (side by side, a grid for more than two), and in compare
mode a B − A bar and an overlay chart. Sources run as async workers that feed the pane models;
data arrival never renders anything. A steady tick renders from the models on a fixed budget,
whatever the line rate: headers (status, line counts) 4 times a second, log tails twice, numbers,
verdicts, segment tables, sparklines, the compare bar and charts once (a chart only when its
window moved); only what changed, and nothing for a pane that is hidden (another one maximised),
scrolled off the screen, or while the view is frozen. The tick follows the grid on which file
followers wake (:func:`tui.core.sources.wakeups.set_wake_grid`), so the lines read and their drawing
share one wake-up of the process; with up to GRID_PANES panes every pane draws on the same ticks
(one costly wake-up a second rather than several), in larger grids they take turns."""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace

from textual.app import ComposeResult
from textual.containers import Container, Grid, Horizontal, Vertical
from textual.errors import NoWidget
from textual.screen import Screen
from textual.widgets import Footer, Header

from tui.core.model.sanitize import visible
from tui.core.sources.base import LineBatch
from tui.core.sources.wakeups import next_grid_point, set_wake_grid
from tui.panes.figures import fit_label
from tui.panes.launch import LaunchPlan
from tui.panes.state import PaneState
from tui.screens import actions, alerting
from tui.screens.keys import WATCH_KEYS
from tui.screens.messages import SegmentStarted, SourceFinished, SourceStatusChanged
from tui.widgets.compare_bar import CompareBar
from tui.widgets.history_chart import ChartData, ChartSeries, HistoryChart
from tui.widgets.layout import grid_shape, row_height
from tui.widgets.source_pane import (
    ALL_PARTS,
    CHART,
    CHART_POINTS,
    LOG,
    NUMBERS,
    SPARK_POINTS,
    SPARKS,
    SourcePane,
    recent,
)

TICK = 0.25  # seconds between renders: headers (status, counts) at 4 Hz however fast lines arrive
TICK_AFTER = 0.004  # the tick comes this long after each point of the followers' wake grid
LOG_EVERY = 2  # ticks between renders of the log tail (2 Hz: a new line is on screen within 0.5 s)
NUMBERS_EVERY = 4  # ticks between renders of the numbers, the verdict and the compare bar (1 Hz)
SPARK_EVERY = 4  # ticks between renders of the sparklines and the segment table (1 Hz)
CHART_EVERY = 4  # ticks between chart renders (1 Hz)
GRID_PANES = 4  # beyond this many panes, those other than the focused one are drawn slower:
NUMBERS_EVERY_GRID = 4  # numbers at 1 Hz,
SPARK_EVERY_GRID = 4  # sparklines at 1 Hz,
CHART_EVERY_GRID = 8  # charts at 0.5 Hz (a chart is the most costly part to draw)
SLICE = 100  # lines parsed between two yields to the event loop (keys stay responsive)
BULK = 512 << 10  # bytes of a buffer scanned between two yields (a replay at max speed)
BURST = 0.020  # seconds of parsing after which a source rests briefly, so the UI's messages flow
MAX_NOTICES_PER_TICK = 3


def nice_ceil(x: float) -> float:
    if x <= 0:
        return 1.0
    if not math.isfinite(x):
        return 1.0  # no scale fits it (the caller leaves such values out)
    mag = 10.0 ** math.floor(math.log10(x))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * mag >= x:
            return m * mag if math.isfinite(m * mag) else x
    return x


def _range(lo_hi: list[tuple[float, float]], step: float, empty: tuple[float, float]) -> tuple[float, float]:
    """The [min, max] over several panes' (min, max), rounded out to ``step``; values that fit no
    scale (inf, nan) are left out, and huge ones (1e308) give a plain [min, max]."""
    pairs = [(a, b) for a, b in lo_hi if math.isfinite(a) and math.isfinite(b)]
    if not pairs:
        return empty
    lo, hi = min(a for a, _ in pairs), max(b for _, b in pairs)
    if max(abs(lo), abs(hi)) / step < 1e12:
        lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
        return (round(lo, 6), round(hi if hi > lo else lo + step, 6))
    return (lo, hi) if hi > lo else (lo, lo + abs(lo) * 1e-6)


def _min_max(values) -> tuple[float, float] | None:
    xs = [v for v in values if v is not None and math.isfinite(v)]
    return (min(xs), max(xs)) if xs else None


SCALE_POINTS = max(
    CHART_POINTS, SPARK_POINTS
)  # the records the shared scales look at (the chart's and sparklines')


class WatchScreen(Screen):
    BINDINGS = [k.binding() for k in WATCH_KEYS]

    def __init__(self, plan: LaunchPlan) -> None:
        super().__init__()
        self.plan = plan
        self.states = [PaneState(p.label, p.where, replay=p.replay) for p in plan.panes]
        self.frozen = False
        self.charts = not plan.compare
        self.overlay = plan.compare and len(plan.panes) == 2
        self.logs = len(plan.panes) <= 2 and not plan.compare
        self.wrap = False  # log tails: long lines wrapped (w) or cut at the width
        self.marks = 0
        self.ticks = 0
        self._on_screen_before: set[int] = set()  # panes visible at the last tick
        self._panes: list[SourcePane] = []
        self.render_seconds = 0.0
        self.tick_log: deque[tuple[float, float]] = deque(
            maxlen=2000
        )  # (start, duration): the bench reads it
        self._seg_seen = [0] * len(self.states)
        self._cmp_version: tuple = ()
        self._overlay_key: tuple = ()
        self._scales: dict[str, tuple[float, float]] = {}
        self._checked = [-1] * len(self.states)  # state version at the last check() of each pane
        self._ranges: list[tuple[int, tuple]] = [(-1, ())] * len(self.states)  # per-pane scale cache
        self.alerts = alerting.for_plan(plan)  # alert rules (tui.screens.alerting), or None
        self.alert_verdict: str | None = None  # compare: the newest B − A verdict on accept len

    # -- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        panes = [
            SourcePane(i, st, chart=self.charts, log=self.logs, id=f"pane-{i}")
            for i, st in enumerate(self.states)
        ]
        with Vertical(id="body"):
            if self.plan.compare and len(panes) == 2:
                yield CompareBar(id="compare")
            box = Grid(*panes, id="panes") if len(panes) > 2 else Horizontal(*panes, id="panes")
            yield box
            if self.plan.compare and len(panes) == 2:
                with Container(id="overlay-box"):
                    yield HistoryChart(id="overlay")
        yield Footer()

    def on_mount(self) -> None:
        self.title = visible(self.plan.title)  # names of files and hosts: shown, never obeyed
        self.sub_title = visible(self._subtitle())
        self._shape_grid()
        for box in self.query("#overlay-box"):
            box.display = self.overlay
        self.set_class(self.plan.compare and len(self.states) == 2, "-compare")
        self.update_layout()
        for i in range(len(self.states)):
            self.run_worker(self._run_source(i), group="sources", name=f"source-{i}", exit_on_error=False)
        set_wake_grid(TICK)  # followers read on the tick's grid: one wake-up per tick, not per write
        self.run_worker(self._ticker(), group="tick", name="tick")
        self.panes[0].focus()
        for pane in self.panes:  # the headers are in the very first frame; the numbers follow with the tick
            pane.show_status(frozen=self.frozen, extra=self._pane_extra(pane), peers=self.peers)
        self.call_after_refresh(self.tick)

    def on_unmount(self) -> None:
        set_wake_grid(None)

    def on_resize(self) -> None:
        self._shape_grid()

    def _shape_grid(self) -> None:
        grid = self.query_one("#panes")
        if isinstance(grid, Grid):
            cols, rows = grid_shape(len(self.states), self.size.width or self.app.size.width)
            grid.styles.grid_size_columns = cols
            grid.styles.grid_size_rows = rows
            fixed = row_height(rows, grid.size.height or self.app.size.height - 2)
            grid.styles.grid_rows = str(fixed) if fixed else "1fr"

    def update_layout(self) -> None:
        """Compare mode: panes as tall as their content unless charts or logs are shown in them."""
        self.set_class(self.charts or self.logs, "-tall-panes")

    def _subtitle(self) -> str:
        n = len(self.states)
        kind = "replay" if all(s.replay for s in self.states) else "watch"
        return f"{kind} · {n} source{'s' if n != 1 else ''}" + (" · compare" if self.plan.compare else "")

    @property
    def panes(self) -> list[SourcePane]:
        """The source panes in order (composed once; a DOM query costs ~3 ms a tick in a grid)."""
        if len(self._panes) != len(self.states):
            self._panes = list(self.query(SourcePane))
        return list(self._panes)

    # -- sources -----------------------------------------------------------------------------
    async def _run_source(self, i: int) -> None:
        spec, state = self.plan.panes[i], self.states[i]
        try:
            src = spec.open()
        except Exception as exc:  # a source that cannot even be opened: say so in its pane
            state.on_finished(str(exc) or type(exc).__name__)
            self.post_message(SourceFinished(i, state.error))
            return
        state.source = src
        burst = time.perf_counter()

        async def rest() -> None:
            nonlocal burst
            if time.perf_counter() - burst > BURST:
                await asyncio.sleep(0.001)  # a real pause: key presses and renders get through
                burst = time.perf_counter()
            else:
                await asyncio.sleep(0)

        try:
            async for batch in src:
                if isinstance(batch, LineBatch):
                    for part in self._pieces(batch):
                        if state.feed_buffer(part):  # a buffer scanned whole (a replay at max speed)
                            await rest()
                        elif len(part.lines) <= SLICE:  # a live write or two: fed at the tick, as one
                            state.hold(part)
                            if state.held_lines >= SLICE:
                                state.flush()
                        else:
                            for k in range(0, len(part.lines), SLICE):
                                state.feed_lines(
                                    replace(
                                        part,
                                        lines=part.lines[k : k + SLICE],
                                        offsets=part.offsets[k : k + SLICE],
                                        first_line_no=part.first_line_no + k,
                                        data=None,
                                    )
                                )
                                await rest()
                else:
                    state.on_event(batch)
                    self.post_message(SourceStatusChanged(i, state.status, batch.message))
                await rest()
            state.on_finished(getattr(src, "error", None))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a source must not take the app down
            state.on_finished(f"{type(exc).__name__}: {exc}")
        finally:
            try:
                await src.aclose()
            except Exception:
                pass
        self.post_message(SourceFinished(i, state.error))

    @staticmethod
    def _pieces(batch: LineBatch) -> list[LineBatch]:
        """A batch with its buffer (a replay at max speed) in pieces of ``BULK`` bytes."""
        if batch.data is None:
            return [batch]
        from tui.panes import bulk as pane_bulk  # the summary machinery: loaded when the first buffer comes

        return pane_bulk.pieces(batch, BULK)

    # -- the tick ----------------------------------------------------------------------------
    async def _ticker(self) -> None:
        """Tick every TICK seconds, TICK_AFTER after each point of the followers' wake grid: the
        lines they read on that point are drawn in the same wake-up of the process (a late tick
        skips to the next point rather than running twice). It stops when the app exits: this
        worker is cancelled only after the screen's widgets are removed, and a tick meanwhile
        would look for them."""
        loop = asyncio.get_running_loop()
        at = next_grid_point(loop.time()) + TICK_AFTER
        while True:
            now = loop.time()
            if at < now:
                at = next_grid_point(now) + TICK_AFTER
            await asyncio.sleep(at - now)
            at += TICK
            if not (self.app.is_running and self.is_attached):  # exiting: widgets are being taken down
                return
            self._on_timer()

    def _on_timer(self) -> None:
        """The cadence: headers every tick; log tails every LOG_EVERY ticks; numbers every
        NUMBERS_EVERY ticks, sparklines every SPARK_EVERY and charts every CHART_EVERY. In a grid of
        more than GRID_PANES panes, all but the focused pane use the ``*_GRID`` cadences and the
        panes are out of phase, so that no tick draws every chart; fewer panes draw together."""
        n = self.ticks
        grid = len(self.states) > GRID_PANES
        focused = self.focused_pane().index

        def parts(i: int) -> frozenset[str]:
            slow = grid and i != focused
            k = n + i if grid else n
            return frozenset(
                ({LOG} if k % LOG_EVERY == 0 else set())
                | ({NUMBERS} if k % (NUMBERS_EVERY_GRID if slow else NUMBERS_EVERY) == 0 else set())
                | ({SPARKS} if k % (SPARK_EVERY_GRID if slow else SPARK_EVERY) == 0 else set())
                | ({CHART} if k % (CHART_EVERY_GRID if slow else CHART_EVERY) == 0 else set())
            )

        compare = frozenset(
            ({NUMBERS} if n % NUMBERS_EVERY == 0 else set()) | ({CHART} if n % CHART_EVERY == 0 else set())
        )
        self.tick(parts, compare=compare, scheduled=True)

    def tick(
        self,
        parts: Callable[[int], frozenset[str]] | None = None,
        *,
        compare: frozenset[str] = ALL_PARTS,
        scheduled: bool = False,
    ) -> None:
        """Render what changed in every visible pane: ``parts(pane index)`` says which parts are
        due (every part by default: what a key press does), ``compare`` those of the compare bar
        and overlay chart."""
        t0 = time.perf_counter()
        self.ticks += 1
        for st in self.states:  # the lines held since the last tick (PaneState.hold), before drawing
            st.flush()
        now = time.monotonic()
        panes = [p for p in self.panes if self.on_screen(p)]
        for pane in panes:
            pane.show_status(frozen=self.frozen, now=now, extra=self._pane_extra(pane), peers=self.peers)
        if not self.frozen:
            # a pane that has just come into view (scrolled to, restored) is drawn whole at once,
            # whatever the cadence: it shows nothing true until then
            seen = self._on_screen_before
            due = [
                ALL_PARTS if parts is None or pane.index not in seen else parts(pane.index) for pane in panes
            ]
            self._on_screen_before = {pane.index for pane in panes}
            scaled = CHART in compare or any(SPARKS in d or CHART in d for d in due)
            if scaled:  # only sparklines and charts use them; only their panes' ranges are read again
                self._scales = self.scales({p.index for p, d in zip(panes, due) if SPARKS in d or CHART in d})
            scales = self._scales
            for pane, d in zip(panes, due):
                pane.show_data(scales, parts=d)
            self._show_compare(scales, compare)
        self._drain_notices()
        if self.alerts is not None:
            alerting.tick(self)
        took = time.perf_counter() - t0
        self.render_seconds += took
        if scheduled:  # the cadence (benchmarks read it); a key's own render is not part of it
            self.tick_log.append((t0, took))

    def on_screen(self, widget) -> bool:
        """Whether any of ``widget`` is on the screen now (not hidden, maximised away or scrolled off)."""
        if not widget.display:
            return False
        top = self.maximized
        if top is not None and top is not widget and top not in widget.ancestors:
            return False
        try:
            geometry = self.find_widget(widget)
        except NoWidget:
            return False
        return geometry.region.intersection(geometry.clip).area > 0

    @property
    def peers(self) -> tuple[str, ...]:
        """Every pane's label: a header cuts a long label to the part that tells it from these."""
        return tuple(st.label for st in self.states)

    def _pane_extra(self, pane: SourcePane) -> str:
        st = pane.state
        return f"{st.lines:,} lines · {st.stats.records:,} records"

    def scales(self, due: set[int] | None = None) -> dict[str, tuple[float, float]]:
        """Shared y-scales: panes side by side are drawn on the same axis (the data's range,
        rounded out, over every pane). A pane's range is computed again only when it changed and
        the pane is in ``due`` (None: every pane), i.e. when it is about to draw with it; until
        then the range it had at its last drawing stands for it."""
        al: list[tuple[float, float]] = []
        ar: list[tuple[float, float]] = []
        tp: list[tuple[float, float]] = []
        for i, st in enumerate(self.states):
            version, ranges = self._ranges[i]
            if version != st.version and (due is None or i in due or version < 0):
                pts = recent(st, SCALE_POINTS)
                ranges = (
                    _min_max(p.accept_len for p in pts),
                    _min_max(p.accept_rate for p in pts),
                    _min_max(p.throughput for p in pts),
                )
                self._ranges[i] = (st.version, ranges)
            for out, r in zip((al, ar, tp), ranges):
                if r is not None:
                    out.append(r)
        return {
            "accept_len": _range(al, 0.25, (1.0, 2.0)),
            "accept_rate": _range(ar, 0.05, (0.0, 1.0)),
            "throughput": (0.0, nice_ceil(max([1.0] + [hi for _, hi in tp]))),
        }

    def _show_compare(self, scales, parts: frozenset[str] = ALL_PARTS) -> None:
        if not (self.plan.compare and len(self.states) == 2):
            return
        a, b = self.states
        key = (a.version, b.version, scales.get("accept_len"))
        if NUMBERS in parts and key != self._cmp_version:
            self._cmp_version = key
            from tui.core.stats.verdicts import comparison  # not needed for the first frame: imported here

            cmp = comparison(a.stats, b.stats)
            self.alert_verdict = cmp["accept_len"]["verdict"]
            self.query_one(CompareBar).show(cmp, a.label, b.label)
        chart = self.query_one("#overlay", HistoryChart)
        okey = (a.seq, b.seq, len(a.boundaries), len(b.boundaries), scales.get("accept_len"))
        if CHART in parts and self.overlay and okey != self._overlay_key and self.on_screen(chart):
            self._overlay_key = okey
            chart.set_data(self.overlay_data(scales.get("accept_len")))

    def overlay_data(self, ylim) -> ChartData:
        pts = [[p for p in recent(st, CHART_POINTS) if p.accept_len is not None] for st in self.states]
        timed = all(ps and all(p.timestamp is not None for p in ps) for ps in pts)
        firsts = [st.history[0].timestamp if st.history else None for st in self.states]
        series, bounds = [], []
        # each legend entry in a third of the chart's width: the part that tells the sources apart
        room = max(12, (self.query_one("#overlay", HistoryChart).size.width or 120) // 3)
        for st, ps, first, colour in zip(self.states, pts, firsts, ("primary", "secondary")):
            name = fit_label(st.label, room, self.peers)
            if timed and first is not None:
                xs = [(p.timestamp - first) / 60.0 for p in ps]
            else:
                xs = [float(p.seq) for p in ps]
            series.append(ChartSeries(name, xs, [p.accept_len for p in ps], colour))
            by_seq = {p.seq: x for p, x in zip(ps, xs)}
            for seq, idx in st.boundaries:
                if seq in by_seq and idx > 0:
                    bounds.append((by_seq[seq], f"{name} seg {idx}", colour))
        xlabel = "minutes since each source's first record" if timed else "record #"
        return ChartData(series, bounds, [], ylim, xlabel=f"accept len, both sources — x: {xlabel}")

    def _drain_notices(self) -> None:
        shown = 0
        dropped = 0
        for i, st in enumerate(self.states):
            if st.version != self._checked[i]:
                self._checked[i] = st.version
                st.check()
            cur = st.stats.current.index
            if cur != self._seg_seen[i]:
                self._seg_seen[i] = cur
                seg = st.stats.current
                self.post_message(SegmentStarted(i, cur, seg.reason, seg.label or seg.config.label()))
            for n in st.take_notices():
                if shown < MAX_NOTICES_PER_TICK:
                    self.app.notify(
                        n.message,
                        title=n.title,
                        severity=n.severity,  # type: ignore[arg-type]
                        timeout=8 if n.severity == "error" else 5,
                        markup=False,
                    )
                    shown += 1
                else:
                    dropped += 1
        if dropped:
            self.app.notify(
                f"{dropped} more notifications in this moment were skipped", timeout=3, markup=False
            )

    def on_source_status_changed(self, message: SourceStatusChanged) -> None:
        if 0 <= message.pane < len(self.states):
            self.panes[message.pane].show_status(
                frozen=self.frozen, extra=self._pane_extra(self.panes[message.pane]), peers=self.peers
            )

    # -- actions (see tui.screens.actions) ---------------------------------------------------
    action_pause = actions.pause
    action_faster = actions.faster
    action_slower = actions.slower
    action_segment = actions.segment
    action_restart_mark = actions.restart_mark
    action_add_mark = actions.add_mark
    action_toggle_chart = actions.toggle_chart
    action_toggle_overlay = actions.toggle_overlay
    action_chart_window = actions.chart_window
    action_find = actions.open_search
    action_toggle_wrap = actions.toggle_wrap
    action_find_next = actions.find_next
    action_scroll_log = actions.scroll_log
    action_toggle_log = actions.toggle_log
    action_filter = actions.open_filter
    action_export = actions.export_csv
    action_focus_pane = actions.focus_pane
    action_zoom = actions.zoom

    def focused_pane(self) -> SourcePane:
        node = self.focused
        while node is not None and not isinstance(node, SourcePane):
            node = node.parent  # type: ignore[assignment]
        return node if isinstance(node, SourcePane) else self.panes[0]

    @property
    def replay_sources(self) -> list:
        return [st.source for st in self.states if st.replay and st.source is not None]
