"""The chart of the recent history, drawn by plotext: one or more series on one axis, segment
boundaries as labelled vertical lines (so a restart with a fixed config shows as a step), user
marks. The x axis is the log's own clock (wall-clock ticks) when ``ChartData.time_axis`` holds,
record numbers otherwise.

:func:`build_strips` is pure: plotext's ANSI text (its module-level figure, used from the event
loop's thread only) read with ``rich.text.Text.from_ansi`` — never as markup — into strips of the
exact size, or a one-line hint when the size cannot hold an axis and a legend. Every outside text
(series names, segment labels, marks) is made visible and inert first. :class:`HistoryChart`
keeps the strips of its last few (data, size, theme) keys in an LRU cache and hands them out from
``render_line``; new data is taken at most once a second (:data:`MIN_INTERVAL`), and a build
happens only when the data, the size or the theme changed.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import plotext as plt
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.strip import Strip
from textual.widget import Widget

from tui.core.model.sanitize import number, visible
from tui.widgets._colours import rgb
from tui.widgets.chart_axis import (
    cut,
    elapsed_ticks,
    nice_ticks,
    runs,
    thin,
    tick_count,
    tick_text,
    time_ticks,
    whole_ticks,
)


@dataclass
class ChartSeries:
    name: str
    xs: list[float]
    ys: list[float]
    colour: str = "primary"  # a theme variable name
    starts: set[int] = field(
        default_factory=set
    )  # points that start a run (after a restart): no line to them


@dataclass
class ChartData:
    series: list[ChartSeries] = field(default_factory=list)
    boundaries: list[tuple[float, str, str]] = field(default_factory=list)  # (x, label, colour)
    marks: list[tuple[float, str]] = field(default_factory=list)
    ylim: tuple[float, float] | None = None
    xlabel: str = "record"
    empty_text: str = "waiting for metric lines…"
    time_axis: bool = False  # xs are epoch seconds by the log's clock: wall-clock ticks
    elapsed_axis: bool = False  # xs are seconds since each source's start: ticks +5 min, +10 min


MIN_ROWS = 6  # from this height a chart has its frame, its y axis ticks and plotext's x label
LEGEND_MIN_ROWS = 2  # a chart of several series (the overlay): its legend row and one of plot
PANE_MIN_ROWS = 4  # a pane's chart: its label row, two rows of plot and the x ticks
FRAMED_ROWS = 6  # from this height the plot has its frame; below it, only the plot and the x ticks
MIN_COLS = 30  # below this the ticks and the legend do not fit: a hint instead
MIN_INTERVAL = 1.0  # seconds: new data is drawn at most this often
SLACK = 0.05  # ... give or take the tick's jitter (no timer for data that comes 0.99 s later)
COLOUR_NAMES = ("primary", "secondary", "accent", "warning", "foreground-muted", "foreground")
_CONSOLE = Console(width=400, color_system="truecolor", force_terminal=True, legacy_windows=False)


PLOTTABLE = 1e12  # no axis holds spans near the float limit (a parsed 1e308)


def _plottable(v: float) -> bool:
    return -PLOTTABLE < v < PLOTTABLE  # False for inf and nan too


def _finite(d: ChartData) -> ChartData:
    """``d`` without the points no axis can hold (inf, nan, 1e308), and with its outside text
    (series names, segment labels, marks) made visible and inert: such points are not drawn, and
    the x label says how many were left out."""
    ylim = d.ylim if d.ylim is None or all(map(_plottable, d.ylim)) else None
    series = []
    off = 0
    for s in d.series:
        pts = [(x, y) for x, y in zip(s.xs, s.ys) if _plottable(x) and y is not None and _plottable(y)]
        off += len(s.xs) - len(pts)
        kept = [
            i for i, (x, y) in enumerate(zip(s.xs, s.ys)) if _plottable(x) and y is not None and _plottable(y)
        ]
        starts = {k for k, i in enumerate(kept) if i in s.starts} if s.starts else set()
        series.append(
            replace(s, name=visible(s.name), xs=[x for x, _ in pts], ys=[y for _, y in pts], starts=starts)
        )
    xlabel = visible(d.xlabel) + (f" · {off} off-scale values not drawn" if off else "")
    return replace(
        d,
        series=series,
        ylim=ylim,
        xlabel=xlabel,
        boundaries=[(x, visible(label), colour) for x, label, colour in d.boundaries],
        marks=[(x, visible(label)) for x, label in d.marks],
    )


def _centred(text: str, w: int, h: int, style: Style) -> list[Strip]:
    text = text if len(text) <= w else text[: max(0, w - 1)] + "…"
    pad = (w - len(text)) // 2
    out = [Strip.blank(w) for _ in range(h)]
    out[h // 2] = Strip([Segment(" " * pad), Segment(text, style), Segment(" " * (w - pad - len(text)))])
    return out


def _apart(ticks: list[float], lo: float, hi: float, cells: int, room) -> list[float]:
    """The ticks that each get cells of their own (``room(t)`` of them) along an axis of
    ``cells``: plotext is never given two labels for one place (which one it keeps would vary)."""
    out: list[float] = []
    last = -math.inf
    for t in ticks:
        at = (t - lo) / (hi - lo) * (cells - 1) if hi > lo else 0.0
        if at - last >= room(t) or not out:
            out.append(t)
            last = at
    return out


def _xticks(d: ChartData, x0: float, x1: float, cols: int) -> tuple[list[float], list[str]]:
    """As many x ticks as the axis holds (:func:`tui.widgets.chart_axis.tick_count`)."""
    if x1 <= x0:
        if d.time_axis:
            return [x0], [time.strftime("%H:%M:%S", time.gmtime(x0))]
        return [x0], [elapsed_ticks(x0, x0 + 1, 2)[1][0] if d.elapsed_axis else tick_text(x0)]
    count = tick_count(cols)
    if d.time_axis:
        return time_ticks(x0, x1, count)
    if d.elapsed_axis:
        return elapsed_ticks(x0, x1, count)
    ticks = whole_ticks(x0, x1, count)
    return ticks, [tick_text(t) for t in ticks]


def _legend_row(d: ChartData, w: int, colours: dict[str, tuple[int, int, int]], muted: Style) -> Strip:
    """The last row of a chart of several series (or of a short one): each series' colour and
    name, then the x label (cut with ``…`` at the width)."""
    text = Text(no_wrap=True, overflow="ellipsis")
    for s in d.series if len(d.series) > 1 else ():
        c = colours.get(s.colour, colours.get("foreground-muted", (128, 128, 128)))
        text.append("⣿⣿ ", Style(color=f"rgb{c}"))
        text.append(cut(s.name, max(8, w // 3)) + "   ")
    text.append(d.xlabel, muted)
    text.truncate(w, overflow="ellipsis")
    return Strip(list(text.render(_CONSOLE))).crop(0, w).extend_cell_length(w)


def build_strips(d: ChartData, w: int, h: int, colours: dict[str, tuple[int, int, int]]) -> list[Strip]:
    """The chart as ``h`` strips of width ``w``; pure (no app access). One series from
    :data:`MIN_ROWS` rows: plotext's frame, ticks and x label. Several, or fewer rows: the legend
    and the x label in a row of their own under the plot, and the plot in whatever rows are left
    (from :data:`LEGEND_MIN_ROWS`; without its frame below :data:`FRAMED_ROWS`). A series is drawn
    in runs: no line across a gap."""
    muted_rgb = colours.get("foreground-muted", (128, 128, 128))
    muted = Style(color=f"rgb{muted_rgb}")
    if w < 1 or h < 1:
        return [Strip.blank(max(0, w)) for _ in range(max(0, h))]
    legend = len(d.series) > 1
    own_row = legend or h < MIN_ROWS  # the legend and the x label in a row of their own under the plot
    if w < MIN_COLS or h < LEGEND_MIN_ROWS:
        return _centred("no room for the chart's axes here (a larger window shows it)", w, h, muted)
    d = _finite(d)
    if not any(s.xs for s in d.series):
        return _centred(d.empty_text, w, h, muted)
    xs_all = [x for s in d.series for x in s.xs]
    x0, x1 = min(xs_all), max(xs_all)
    if d.ylim is not None:
        lo, hi = d.ylim
    else:
        ys = [y for s in d.series for y in s.ys]
        lo, hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
    if hi <= lo:
        hi = lo + 1.0
    plot_h = h - 1 if own_row else h
    framed = plot_h >= FRAMED_ROWS or not own_row
    # the plot's own rows: less the frame (top, bottom), the tick labels and plotext's x label
    xaxis = framed or plot_h >= 2  # one row: the plot alone (its legend row says what x is)
    rows = plot_h - (2 if framed else 0) - (1 if xaxis else 0) - (0 if own_row else 1)
    yticks = _apart(nice_ticks(lo, hi, max(2, min(6, rows // 2))), lo, hi, rows, lambda t: 1)
    if not framed:  # two rows of dots or so: the ends of the scale
        yticks = [lo, hi] if rows >= 2 else [hi]
    ylabels = [number(t) for t in yticks] if rows >= 2 or framed else [f"{number(lo)}–{number(hi)}"]
    cols = w - max(map(len, ylabels)) - 3
    xticks, labels = _xticks(d, x0, x1, cols) if xaxis else ([], [])
    label_of = dict(zip(xticks, labels))
    width = {t: len(text) for t, text in label_of.items()}
    # two cells between labels at least: plotext never has to move one for its neighbour
    if x1 > x0 and len(xticks) > 2:  # and none that plotext would have to move off the plot's edges
        inside = [
            t for t in xticks if width[t] / 2 <= (t - x0) / (x1 - x0) * (cols - 1) <= cols - 1 - width[t] / 2
        ]
        xticks = inside if len(inside) >= 2 else xticks
    keep = set(_apart(xticks, x0, x1, cols, lambda t: width[t] + 3)) if x1 > x0 else set(xticks)
    xticks = [t for t in xticks if t in keep]
    xlabels = [label_of[t] for t in xticks]
    colour = {name: colours.get(name, muted_rgb) for name in COLOUR_NAMES}

    plt.clear_figure()
    plt.limit_size(False, False)
    plt.plotsize(w, plot_h)
    plt.theme("clear")
    plt.ticks_color(muted_rgb)
    plt.axes_color("default")
    plt.canvas_color("default")
    if not framed:
        plt.frame(False)
    span = x1 - x0
    for s in d.series:
        parts = runs(s.xs, s.starts)
        for i, j in parts:  # each run thinned to its share of the plot's dots
            share = (s.xs[j - 1] - s.xs[i]) / span if span > 0 else 1.0
            xs, ys = thin(s.xs[i:j], s.ys[i:j], max(2, int(cols * 2 * share)))
            plt.plot(xs, ys, marker="braille", color=colour.get(s.colour, muted_rgb))
    if span > 0:
        plt.xlim(x0, x1)
    plt.ylim(lo, hi)
    plt.yticks(yticks, ylabels)
    plt.xticks(xticks, xlabels)
    placed = sorted((x, label, c) for x, label, c in d.boundaries if x0 <= x <= x1)
    for i, (x, label, c) in enumerate(placed):
        plt.vline(x, colour.get(c, muted_rgb))
        nxt = placed[i + 1][0] if i + 1 < len(placed) else x1
        room = int((nxt - x) / span * cols) - 2 if span > 0 else cols - 2
        if room >= 4 and framed:
            plt.text(cut(label, room), x, hi, color=colour.get(c, muted_rgb), alignment="left")
    marks = sorted((x, label) for x, label in d.marks if x0 <= x <= x1)
    for i, (x, label) in enumerate(marks):  # (a storm of rotations: each label only in its own room)
        plt.vline(x, colour["warning"])
        last = i + 1 == len(marks)
        room = cols if last or span <= 0 else int((marks[i + 1][0] - x) / span * cols) - 1
        if room >= min(4, len(label)):
            plt.text(cut(label, room), x, lo, color=colour["warning"], alignment="left")
    if not own_row:
        plt.xlabel(cut(d.xlabel, max(0, cols)))  # plotext drops a label wider than its plot
    ansi = plt.build()
    plt.clear_figure()  # nothing kept between builds (plotext's figure is module-wide)
    lines = Text.from_ansi(ansi).split("\n")
    strips = [Strip(list(line.render(_CONSOLE))).crop(0, w).extend_cell_length(w) for line in lines[:plot_h]]
    strips += [Strip.blank(w) for _ in range(plot_h - len(strips))]
    if own_row:
        strips.append(_legend_row(d, w, colour, muted))
    return strips


class HistoryChart(Widget):
    """Shows the chart of the data last set; built on first draw after a change of data, size or
    theme, and kept (an LRU of strips) until the next. New data is taken at most once every
    :data:`MIN_INTERVAL` seconds: data set sooner waits (the newest of it) for a timer."""

    DEFAULT_CSS = """
    HistoryChart {
        height: 1fr;
        min-height: 4;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.data = ChartData()
        self._version = 0
        self._cache: LRUCache[tuple, list[Strip]] = LRUCache(4)
        self._built_key: tuple | None = None
        self._taken = -math.inf  # monotonic time the data was last taken
        self._pending: ChartData | None = None
        self.builds = 0

    def set_data(self, data: ChartData) -> None:
        wait = self._taken + MIN_INTERVAL - SLACK - time.monotonic()
        if wait > 0:
            if self._pending is None:
                self.set_timer(wait, self._take_pending)
            self._pending = data
            return
        self._take(data)

    def _take(self, data: ChartData) -> None:
        # data taken now supersedes any waiting for the timer: a timer that fires late (a busy
        # loop) must not put the older data back over it (a grid pane kept an old chart for good)
        self._pending = None
        self.data = data
        self._version += 1
        self._taken = time.monotonic()
        self.refresh()

    def _take_pending(self) -> None:
        data, self._pending = self._pending, None
        if data is not None:
            self._take(data)

    @property
    def settled(self) -> bool:
        """The chart on screen shows the newest data at the current size (tests wait for this)."""
        return self._pending is None and self._built_key == self._key()

    def _key(self) -> tuple:
        return (self._version, self.size.width, self.size.height, self.app.theme)

    def _strips(self) -> list[Strip]:
        key = self._key()
        strips = self._cache.get(key)
        if strips is None:
            colours = {name: rgb(self.app, name) for name in COLOUR_NAMES}
            try:
                strips = build_strips(self.data, self.size.width, self.size.height, colours)
            except Exception as exc:  # a drawing problem must not take the app down
                strips = [Strip([Segment(f"chart unavailable: {exc}"[: self.size.width])])]
            self._cache[key] = strips
            self.builds += 1
        self._built_key = key
        return strips

    def render_line(self, y: int) -> Strip:
        strips = self._strips()
        return strips[y] if 0 <= y < len(strips) else Strip.blank(self.size.width)
