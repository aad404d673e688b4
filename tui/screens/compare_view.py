"""Compare mode's part of the watch screen: the B − A bar (:class:`~tui.widgets.compare_bar.CompareBar`,
``#compare``) and the overlay chart (``#overlay``, in ``#overlay-box``) of two panes, drawn on the
tick (:meth:`CompareScreen.show_compare`) when either side changed. A subclass composes the two
widgets when ``plan.compare`` holds two sources."""

from __future__ import annotations

import time
from dataclasses import replace

from textual.binding import ActiveBinding

from tui.panes.labels import fit_label
from tui.panes.launch import LaunchPlan
from tui.screens.footer_keys import footer_actions, mode_of
from tui.screens.ticking import TickingScreen
from tui.widgets.compare_bar import CompareBar
from tui.widgets.history_chart import FRAMED_ROWS, LEGEND_MIN_ROWS, ChartData, ChartSeries, HistoryChart
from tui.widgets.source_pane import ALL_PARTS, CHART, CHART_POINTS, NUMBERS, SourcePane, recent

OVERLAY_MIN = LEGEND_MIN_ROWS  # rows the overlay chart needs at least: two of plot and its legend
OVERLAY_FRAMED = 2 + FRAMED_ROWS + 1  # from these rows it has its box (border) and a framed plot
PANES_MIN = 10  # rows the panes keep when they share the height with the overlay chart
SHARED_GAP = 0.1  # two sources' time ranges this close (of their union) share one wall-clock axis


class CompareScreen(TickingScreen):
    def __init__(self, plan: LaunchPlan) -> None:
        super().__init__(plan)
        self.overlay = plan.compare and len(plan.panes) == 2  # the overlay chart shown (o)
        self._cmp_version: tuple = ()  # what the bar was drawn from
        self._overlay_key: tuple = ()  # what the overlay chart was drawn from
        self._footer_mode = ""  # the mode the footer's keys were chosen for

    def redraw_compare(self) -> None:
        """The bar and the overlay chart drawn again at the next tick, changed or not."""
        self._cmp_version = ()
        self._overlay_key = ()

    def show_compare(self, scales: dict[str, tuple[float, float]], parts: frozenset[str] = ALL_PARTS) -> None:
        """The B − A bar (``NUMBERS``) and the overlay chart (``CHART``), when they changed."""
        self.check_footer()
        if not (self.plan.compare and len(self.states) == 2):
            return
        self.fit_compare()
        a, b = self.states
        key = (a.version, b.version, scales.get("accept_len"))
        if NUMBERS in parts and key != self._cmp_version:
            self._cmp_version = key
            from tui.core.stats.verdicts import comparison  # not needed for the first frame: imported here

            cmp = comparison(a.stats, b.stats)
            self.alert_verdict = cmp["accept_len"]["verdict"]
            self.query_one(CompareBar).show(cmp, a.label, b.label)
        chart = self.query_one("#overlay", HistoryChart)
        windows = tuple(
            (p.window, p.pan_end) for p in self.query(SourcePane)
        )  # the overlay shows the panes' windows
        okey = (a.seq, b.seq, len(a.boundaries), len(b.boundaries), scales.get("accept_len"), windows)
        if CHART in parts and self.overlay and okey != self._overlay_key and self.on_screen(chart):
            self._overlay_key = okey
            chart.set_data(self.overlay_data(scales.get("accept_len")))

    @property
    def footer_mode(self) -> str:
        """live, replay (one plays) or ended (:func:`tui.screens.footer_keys.mode_of`)."""
        return mode_of((st.status.value for st in self.states), any(st.replay for st in self.states))

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """Textual's, with the keys that do not matter in this mode, or do not fit the width,
        left out of the footer (they still work; ``?`` lists every key)."""
        active = super().active_bindings
        labels = {
            ab.binding.action: (self.app.get_key_display(ab.binding), ab.binding.description)
            for ab in active.values()
            if ab.binding.show
        }
        keep = footer_actions(self.footer_mode, self.app.size.width, labels)
        return {
            key: ab
            if not ab.binding.show or ab.binding.action in keep
            else ActiveBinding(ab.node, replace(ab.binding, show=False), ab.enabled, ab.tooltip)
            for key, ab in active.items()
        }

    def check_footer(self) -> None:
        """The footer drawn again when the mode changed (a replay ended)."""
        mode = self.footer_mode
        if mode != self._footer_mode:
            self._footer_mode = mode
            self.refresh_bindings()

    def on_resize(self) -> None:
        self.refresh_bindings()  # as many keys as fit the new width
        self.call_after_refresh(self.fit_compare)

    def fit_compare(self) -> None:
        """The overlay chart in whatever rows are left under the panes — in its box from
        ``OVERLAY_FRAMED`` rows, without the box below that, hidden with a hint on the bar only
        when fewer than ``OVERLAY_MIN`` are left — and the two panes ending on the same row."""
        if not (self.plan.compare and len(self.states) == 2) or self.maximized is not None:
            return
        bar = self.query_one(CompareBar)
        body, panes = self.query_one("#body"), self.query_one("#panes")
        room = body.size.height - bar.outer_size.height
        if not self.has_class("-tall-panes"):  # panes as tall as their content; the chart below them
            room -= panes.outer_size.height
        else:  # the panes share the height with the chart: they keep at least PANES_MIN rows
            room -= PANES_MIN
        fits = room >= OVERLAY_MIN
        for box in self.query("#overlay-box"):
            show = self.overlay and fits
            if box.display != show:
                box.display = show
                self._overlay_key = ()
            box.set_class(room < OVERLAY_FRAMED, "-tight")
        hint = (
            "" if fits or not self.overlay else f"overlay chart hidden: no room (it needs {OVERLAY_MIN} rows)"
        )
        if (bar.border_subtitle or "") != hint:
            bar.border_subtitle = hint
        if not self.has_class("-tall-panes"):  # both panes end on the same row: the taller one's
            shown = list(self.query(SourcePane))
            natural = [natural_height(p) for p in shown]
            tallest = max(natural)
            for p, rows in zip(shown, natural):
                least = None if rows == tallest else tallest
                current = p.styles.min_height
                if (current.value if current is not None else None) != least:
                    p.styles.min_height = least

    def overlay_data(self, ylim) -> ChartData:
        """Both sources on one axis: the log's wall clock when both have timestamps and their
        time ranges meet (or nearly); each on its own clock (time since its first record, said on
        the axis with each start) when they lie apart; record numbers without timestamps."""
        panes = list(self.query(SourcePane))[:2]  # each source in its pane's window (< >, { })
        pts = [pane.chart_points()[0] for pane in panes]
        if not all(pts):  # a pane without records yet (or panned past them): nothing to overlay but what is
            pts = [
                ps or [p for p in recent(st, CHART_POINTS) if p.accept_len is not None]
                for ps, st in zip(pts, self.states)
            ]
        timed = all(ps and all(p.timestamp is not None for p in ps) for ps in pts)
        shared = timed and _meet([(ps[0].timestamp, ps[-1].timestamp) for ps in pts])
        series, bounds = [], []
        # each legend entry in a third of the chart's width: the part that tells the sources apart
        room = max(12, (self.query_one("#overlay", HistoryChart).size.width or 120) // 3)
        for tag, st, ps, colour in zip("AB", self.states, pts, ("primary", "secondary")):
            name = f"{tag} {fit_label(st.label, room - 2, self.peers)}"  # A and B, as in the headers
            if timed:
                first = 0.0 if shared else ps[0].timestamp
                xs = [p.timestamp - first for p in ps]
            else:
                xs = [float(p.seq) for p in ps]
            starts = {i for i in range(1, len(ps)) if ps[i].segment != ps[i - 1].segment}
            series.append(ChartSeries(name, xs, [p.accept_len for p in ps], colour, starts=starts))
            by_seq = {p.seq: x for p, x in zip(ps, xs)}
            for seq, idx in st.boundaries:
                if seq in by_seq and idx > 0:
                    bounds.append((by_seq[seq], f"{tag} seg {idx}", colour))
        if shared:
            xlabel = "x: time by the logs' clock, both on one axis"
        elif timed:  # far apart (yesterday's run, today's): each from its own start, said with it
            starts_said = ", ".join(f"{t} {_clock(ps[0].timestamp)}" for t, ps in zip("AB", pts))
            xlabel = f"x: since the first record, each on its own clock ({starts_said})"
        else:
            xlabel = "x: record #"
        return ChartData(
            series,
            bounds,
            [],
            ylim,
            xlabel=f"accept len · {xlabel}",
            time_axis=shared,
            elapsed_axis=timed and not shared,
        )


def _meet(ranges: list[tuple[float, float]]) -> bool:
    """Whether time ranges overlap, or lie apart by less than ``SHARED_GAP`` of their union."""
    lo = min(a for a, _ in ranges)
    hi = max(b for _, b in ranges)
    apart = max(a for a, _ in ranges) - min(b for _, b in ranges)
    return apart <= SHARED_GAP * max(hi - lo, 1e-9)


def _clock(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(ts))  # naive seconds: the log's own fields


def natural_height(pane: SourcePane) -> int:
    """The rows a pane's content takes (to its last block's margin) with its border: its height
    without the ``min-height`` that evens it up with the other pane."""
    bottoms = [c.region.bottom + c.styles.margin.bottom for c in pane.children if c.display]
    return (max(bottoms) - pane.content_region.y if bottoms else 0) + 2
