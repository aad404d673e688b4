"""A plotext chart of the recent history: one or more series on one axis, segment boundaries as
labelled vertical lines (so a restart with a fixed config shows as a step), user marks.

plotext keeps global state, so the chart is built in ``render`` (the UI thread) from data set
beforehand, and only rebuilt when the data, the size or the theme changed (a redraw allocates
nothing that outlives it: the figure is cleared each time).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field, replace

import plotext as plt
from rich.text import Text
from textual.timer import Timer
from textual.widget import Widget

from tui.core.sanitize import number, visible
from tui.widgets._colours import rgb


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


def downsample(xs: list[float], ys: list[float], n: int) -> tuple[list[float], list[float]]:
    """At most ``n`` points: bucket means (one per column; braille still draws the line between)."""
    if len(xs) <= n:
        return xs, ys
    ox, oy = [], []
    for i in range(n):
        a, b = i * len(xs) // n, max(i * len(xs) // n + 1, (i + 1) * len(xs) // n)
        ox.append(sum(xs[a:b]) / (b - a))
        oy.append(sum(ys[a:b]) / (b - a))
    return ox, oy


def nice_ticks(lo: float, hi: float, count: int) -> list[float]:
    """Round tick values (steps of 1, 2, 2.5 or 5 × 10^k) covering [lo, hi]."""
    raw = (hi - lo) / max(1, count)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    step = next((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), 10 * mag)
    first = math.ceil(lo / step - 1e-9) * step
    out = []
    x = first
    while x <= hi + 1e-9:
        out.append(round(x, 10))
        x += step
    return out


PLOTTABLE = 1e12  # plotext overflows on spans near the float limit (a parsed 1e308)


def _plottable(v: float) -> bool:
    return -PLOTTABLE < v < PLOTTABLE  # False for inf and nan too


def _finite(d: ChartData) -> ChartData:
    """``d`` without the points no axis can hold (inf, nan, 1e308): they are not drawn, and the
    x label says how many were left out."""
    ylim = d.ylim if d.ylim is None or all(map(_plottable, d.ylim)) else None
    if all(_plottable(v) for s in d.series for v in (*s.xs, *s.ys)):
        return d if ylim == d.ylim else replace(d, ylim=ylim)
    series = []
    off = 0
    for s in d.series:
        pts = [(x, y) for x, y in zip(s.xs, s.ys) if _plottable(x) and _plottable(y)]
        off += len(s.xs) - len(pts)
        series.append(ChartSeries(s.name, [x for x, _ in pts], [y for _, y in pts], s.colour))
    return replace(d, series=series, ylim=ylim, xlabel=f"{d.xlabel} · {off} off-scale values not drawn")


# plotext keeps its figure in module globals: one build at a time, whichever chart asks.
_PLOTEXT = threading.Lock()
MIN_INTERVAL = 0.5  # seconds between two builds of one chart (plotext takes 20-150 ms a build)

COLOUR_NAMES = ("primary", "secondary", "accent", "warning", "foreground-muted")


def build_chart(d: ChartData, w: int, h: int, colours: dict[str, tuple[int, int, int]]) -> Text:
    """The chart as Rich text; pure (no app access), so it can run in a thread."""
    if w < 10 or h < 4:
        return Text("")
    d = _finite(d)
    if not any(s.xs for s in d.series):
        return Text(d.empty_text, style="dim", justify="center")
    xs_all = [x for s in d.series for x in s.xs]
    x0, x1 = min(xs_all), max(xs_all)
    if d.ylim is not None:
        lo, hi = d.ylim
    else:
        ys_all = [y for s in d.series for y in s.ys]
        lo, hi = min(ys_all), max(ys_all)
    if hi <= lo:
        hi = lo + 1.0
    cols = max(1, w - 8)
    span = max(1e-9, x1 - x0)
    with _PLOTEXT:
        plt.clear_figure()
        plt.limit_size(False, False)
        plt.plotsize(w, h)
        plt.theme("clear")
        plt.ticks_color(colours["foreground-muted"])
        plt.axes_color("default")
        plt.canvas_color("default")
        plt.ylim(lo, hi)
        ticks = nice_ticks(lo, hi, max(2, min(6, h // 3)))
        plt.yticks(ticks, [number(t) for t in ticks])
        if x1 > x0:
            plt.xlim(x0, x1)
        for s in d.series:
            if s.xs:
                xs, ys = downsample(s.xs, s.ys, cols)
                plt.plot(
                    xs,
                    ys,
                    color=colours[s.colour],
                    marker="braille",
                    label=visible(s.name) if len(d.series) > 1 else None,
                )
        for x, label, colour in d.boundaries:
            if not x0 <= x <= x1:
                continue
            plt.vline(x, colours[colour])
            room = int((x1 - x) / span * cols) - 2
            if room >= 4:
                plt.text(visible(label)[:room], x + span / cols * 1.2, hi, color=colours[colour])
        for x, label in d.marks:
            if x0 <= x <= x1:
                plt.vline(x, colours["warning"])
                plt.text(
                    visible(label), x + span / cols * 1.2, lo + (hi - lo) * 0.05, color=colours["warning"]
                )
        plt.xlabel(visible(d.xlabel))
        out = plt.build()
        plt.clear_figure()
    return Text.from_ansi(out, no_wrap=True)


class HistoryChart(Widget):
    """Shows the last chart built; builds run in a worker thread, at most every MIN_INTERVAL
    seconds, the newest data winning (a build never blocks the keys)."""

    DEFAULT_CSS = """
    HistoryChart {
        height: 1fr;
        min-height: 5;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.data = ChartData()
        self._version = 0
        self._built_key: tuple | None = None
        self._text = Text("")
        self._busy = False
        self._last_build = 0.0
        self._timer: Timer | None = None
        self.builds = 0

    def set_data(self, data: ChartData) -> None:
        self.data = data
        self._version += 1
        self._request()

    def on_resize(self) -> None:
        self._request()

    @property
    def settled(self) -> bool:
        """The chart shows the newest data at the current size (tests wait for this)."""
        return not self._busy and self._built_key == self._key()

    def _key(self) -> tuple:
        return (self._version, self.size.width, self.size.height, self.app.theme)

    def _request(self) -> None:
        if self._busy or self._built_key == self._key() or not self.is_mounted:
            return
        wait = self._last_build + MIN_INTERVAL - time.monotonic()
        if wait > 0:
            if self._timer is None:
                self._timer = self.set_timer(wait, self._timer_fired)
            return
        self._start()

    def _timer_fired(self) -> None:
        self._timer = None
        self._request()

    def _start(self) -> None:
        key = self._key()
        colours = {name: rgb(self.app, name) for name in COLOUR_NAMES}
        data, w, h = self.data, self.size.width, self.size.height
        self._busy = True
        self._last_build = time.monotonic()

        def work() -> None:
            try:
                text = build_chart(data, w, h, colours)
            except Exception as exc:  # a plotting problem must not take the app down
                text = Text(f"chart unavailable: {exc}", style="dim")
            try:
                self.app.call_from_thread(self._done, key, text)
            except RuntimeError:  # the app is closing
                pass

        self.run_worker(work, thread=True, group="chart", exit_on_error=False)

    def _done(self, key: tuple, text: Text) -> None:
        self._busy = False
        self._built_key = key
        self._text = text
        self.builds += 1
        self.refresh()
        self._request()  # newer data may have arrived meanwhile

    def render(self) -> Text:
        if self._built_key != self._key():
            self.call_later(self._request)
        return self._text
