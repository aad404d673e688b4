"""Compare mode's part of the watch screen: the B − A bar (:class:`~tui.widgets.compare_bar.CompareBar`,
``#compare``) and the overlay chart (``#overlay``, in ``#overlay-box``) of two panes, drawn on the
tick (:meth:`CompareScreen.show_compare`) when either side changed. A subclass composes the two
widgets when ``plan.compare`` holds two sources."""

from __future__ import annotations

from tui.panes.labels import fit_label
from tui.panes.launch import LaunchPlan
from tui.screens.ticking import TickingScreen
from tui.widgets.compare_bar import CompareBar
from tui.widgets.history_chart import ChartData, ChartSeries, HistoryChart
from tui.widgets.source_pane import ALL_PARTS, CHART, CHART_POINTS, NUMBERS, recent


class CompareScreen(TickingScreen):
    def __init__(self, plan: LaunchPlan) -> None:
        super().__init__(plan)
        self.overlay = plan.compare and len(plan.panes) == 2  # the overlay chart shown (o)
        self._cmp_version: tuple = ()  # what the bar was drawn from
        self._overlay_key: tuple = ()  # what the overlay chart was drawn from

    def redraw_compare(self) -> None:
        """The bar and the overlay chart drawn again at the next tick, changed or not."""
        self._cmp_version = ()
        self._overlay_key = ()

    def show_compare(self, scales: dict[str, tuple[float, float]], parts: frozenset[str] = ALL_PARTS) -> None:
        """The B − A bar (``NUMBERS``) and the overlay chart (``CHART``), when they changed."""
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
