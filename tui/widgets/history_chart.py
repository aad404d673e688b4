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
from tui.widgets.chart_axis import nice_ticks, thin, tick_text, time_ticks, whole_ticks


@dataclass
class ChartSeries:
    name: str
    xs: list[float]
    ys: list[float]
    colour: str = "primary"  # a theme variable name


@dataclass
class ChartData:
    series: list[ChartSeries] = field(default_factory=list)
    boundaries: list[tuple[float, str, str]] = field(default_factory=list)  # (x, label, colour)
    marks: list[tuple[float, str]] = field(default_factory=list)
    ylim: tuple[float, float] | None = None
    xlabel: str = "record"
    empty_text: str = "waiting for metric lines…"
    time_axis: bool = False  # xs are epoch seconds by the log's clock: wall-clock ticks


MIN_ROWS = 6  # below this a y axis is not readable: the pane hides the chart (z shows it big)
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
        series.append(replace(s, name=visible(s.name), xs=[x for x, _ in pts], ys=[y for _, y in pts]))
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
    if x1 <= x0:
        return [x0], [time.strftime("%H:%M:%S", time.gmtime(x0)) if d.time_axis else tick_text(x0)]
    if d.time_axis:
        return time_ticks(x0, x1, max(2, min(8, cols // 14)))
    ticks = whole_ticks(x0, x1, max(2, min(8, cols // 12)))
    return ticks, [tick_text(t) for t in ticks]


def build_strips(d: ChartData, w: int, h: int, colours: dict[str, tuple[int, int, int]]) -> list[Strip]:
    """The chart as ``h`` strips of width ``w``; pure (no app access)."""
    muted_rgb = colours.get("foreground-muted", (128, 128, 128))
    muted = Style(color=f"rgb{muted_rgb}")
    if w < 1 or h < 1:
        return [Strip.blank(max(0, w)) for _ in range(max(0, h))]
    legend = len(d.series) > 1  # the legend takes two rows of the plot
    if w < MIN_COLS or h < MIN_ROWS + (2 if legend else 0):
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
    rows = h - 4  # frame top and bottom, tick labels, x label
    yticks = _apart(nice_ticks(lo, hi, max(2, min(6, rows // 2))), lo, hi, rows, lambda t: 1)
    ylabels = [number(t) for t in yticks]
    cols = w - max(map(len, ylabels)) - 3
    xticks, xlabels = _xticks(d, x0, x1, cols)
    width = dict(zip(xticks, map(len, xlabels)))
    keep = set(_apart(xticks, x0, x1, cols, lambda t: width[t] + 1)) if x1 > x0 else set(xticks)
    xlabels = [text for t, text in zip(xticks, xlabels) if t in keep]
    xticks = [t for t in xticks if t in keep]
    colour = {name: colours.get(name, muted_rgb) for name in COLOUR_NAMES}

    plt.clear_figure()
    plt.limit_size(False, False)
    plt.plotsize(w, h)
    plt.theme("clear")
    plt.ticks_color(muted_rgb)
    plt.axes_color("default")
    plt.canvas_color("default")
    for s in d.series:
        if s.xs:
            xs, ys = thin(s.xs, s.ys, max(2, cols * 2))
            plt.plot(xs, ys, marker="braille", color=colour.get(s.colour, muted_rgb),
                     label=s.name[: max(4, cols // 3)] if legend else None)  # fmt: skip
    span = x1 - x0
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
        if room >= 4 and not (legend and i == 0 and x == x0):
            plt.text(label[:room], x, hi, color=colour.get(c, muted_rgb), alignment="left")
    for x, label in d.marks:
        if x0 <= x <= x1:
            plt.vline(x, colour["warning"])
            plt.text(label, x, lo, color=colour["warning"], alignment="left")
    plt.xlabel(d.xlabel[: max(0, w - 2)])
    ansi = plt.build()
    plt.clear_figure()  # nothing kept between builds (plotext's figure is module-wide)
    lines = Text.from_ansi(ansi).split("\n")
    strips = [Strip(list(line.render(_CONSOLE))).crop(0, w).extend_cell_length(w) for line in lines[:h]]
    strips += [Strip.blank(w) for _ in range(h - len(strips))]
    return strips


class HistoryChart(Widget):
    """Shows the chart of the data last set; built on first draw after a change of data, size or
    theme, and kept (an LRU of strips) until the next. New data is taken at most once every
    :data:`MIN_INTERVAL` seconds: data set sooner waits (the newest of it) for a timer."""

    DEFAULT_CSS = """
    HistoryChart {
        height: 1fr;
        min-height: 6;
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
