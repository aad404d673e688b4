"""The drawing half of the watch screen: a steady tick renders from the pane models on a fixed
budget, whatever the line rate (data arrival never renders anything): headers (status, line
counts) 4 times a second, log tails twice, numbers, verdicts, segment tables, sparklines, the
compare bar and charts once (a chart only when its window moved); only what changed, and nothing
for a pane that is hidden (another one maximised), scrolled off the screen, or while the view is
frozen. The tick follows the grid on which file followers wake
(:func:`tui.core.sources.wakeups.set_wake_grid`), so the lines read and their drawing share one
wake-up of the process; with up to GRID_PANES panes every pane draws on the same ticks (one
costly wake-up a second rather than several), in larger grids they take turns.

:class:`TickingScreen` holds what every part of the watch screen reads: the launch plan, one
:class:`~tui.panes.state.PaneState` per pane, the source panes (which a subclass composes, one
:class:`~tui.widgets.source_pane.SourcePane` each), ``frozen`` and ``marks``. Subclasses add to a
tick by overriding :meth:`TickingScreen.show_compare`.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable

from textual.errors import NoWidget
from textual.screen import Screen

from tui.core.sources.wakeups import next_grid_point, set_wake_grid
from tui.panes.launch import LaunchPlan
from tui.panes.state import PaneState
from tui.screens import alerting
from tui.screens.messages import SegmentStarted, SourceFirstLines, SourceStatusChanged
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
ENDS = frozenset({"ended", "error"})  # statuses after which a source yields nothing more
NUMBERS_EVERY = 4  # ticks between renders of the numbers, the verdict and the compare bar (1 Hz)
SPARK_EVERY = 4  # ticks between renders of the sparklines and the segment table (1 Hz)
CHART_EVERY = 4  # ticks between chart renders (1 Hz)
GRID_PANES = 4  # beyond this many panes, those other than the focused one are drawn slower:
NUMBERS_EVERY_GRID = 4  # numbers at 1 Hz,
SPARK_EVERY_GRID = 4  # sparklines at 1 Hz,
CHART_EVERY_GRID = 8  # charts at 0.5 Hz (a chart is the most costly part to draw)
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


class TickingScreen(Screen):
    def __init__(self, plan: LaunchPlan) -> None:
        super().__init__()
        self.plan = plan
        self.states = [PaneState(p.label, p.where, replay=p.replay) for p in plan.panes]
        self.frozen = False  # live view frozen (space): sources are still read, nothing is drawn
        self.marks = 0  # marks dropped so far (m, alerts)
        self.ticks = 0
        self.render_seconds = 0.0
        self.tick_log: deque[tuple[float, float]] = deque(
            maxlen=2000
        )  # (start, duration): the bench reads it
        self.alerts = alerting.for_plan(plan)  # alert rules (tui.screens.alerting), or None
        self.alert_verdict: str | None = None  # compare: the newest B − A verdict on accept len
        self._panes: list[SourcePane] = []
        self._on_screen_before: set[int] = set()  # panes visible at the last tick
        self._seg_seen = [0] * len(self.states)
        self._scales: dict[str, tuple[float, float]] = {}
        self._checked = [-1] * len(self.states)  # state version at the last check() of each pane
        self._ranges: list[tuple[int, tuple]] = [(-1, ())] * len(self.states)  # per-pane scale cache

    @property
    def panes(self) -> list[SourcePane]:
        """The source panes in order (composed once; a DOM query costs ~3 ms a tick in a grid)."""
        if len(self._panes) != len(self.states):
            self._panes = list(self.query(SourcePane))
        return list(self._panes)

    def focused_pane(self) -> SourcePane:
        node = self.focused
        while node is not None and not isinstance(node, SourcePane):
            node = node.parent  # type: ignore[assignment]
        return node if isinstance(node, SourcePane) else self.panes[0]

    # -- the tick ----------------------------------------------------------------------------
    def start_ticking(self) -> None:
        """Start the tick; file followers read on its grid from now on (one wake-up per tick, not
        one per write) until the screen is unmounted."""
        set_wake_grid(TICK)
        self.run_worker(self._ticker(), group="tick", name="tick")

    def on_unmount(self) -> None:
        set_wake_grid(None)

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
            pane.show_status(frozen=self.frozen, now=now, extra=self.pane_extra(pane), peers=self.peers)
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
            self.show_compare(scales, compare)
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

    def pane_extra(self, pane: SourcePane) -> str:
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

    def on_source_first_lines(self, message: SourceFirstLines) -> None:
        """A source's first lines: every part drawn now (the held lines fed first), not up to a
        second later at the numbers' cadence."""
        self.call_after_refresh(self.tick)

    def on_source_status_changed(self, message: SourceStatusChanged) -> None:
        panes = self.panes  # none while the app exits
        if 0 <= message.pane < len(panes):
            pane = panes[message.pane]
            pane.show_status(frozen=self.frozen, extra=self.pane_extra(pane), peers=self.peers)
            if message.status in ENDS:
                # a source that ended is drawn whole at once (its numbers, the compare bar, the
                # charts), not at the cadence: its last picture would stay half old (the pane
                # ended, the B − A bar from a second before) until the next due tick
                self.call_after_refresh(self.tick)

    def show_compare(self, scales: dict[str, tuple[float, float]], parts: frozenset[str] = ALL_PARTS) -> None:
        """Draw what goes beside the panes (the compare bar and overlay chart) with the shared
        ``scales``; ``parts`` says which are due. Nothing here: :class:`CompareScreen` draws them."""
