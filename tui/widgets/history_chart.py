"""A plotext chart of the recent history: one or more series on one axis, segment boundaries as
labelled vertical lines (so a restart with a fixed config shows as a step), user marks.

plotext keeps global state, so the chart is built in ``render`` (the UI thread) from data set
beforehand, and only rebuilt when the data, the size or the theme changed (a redraw allocates
nothing that outlives it: the figure is cleared each time).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import plotext as plt
from rich.text import Text
from textual.widget import Widget

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
    """At most ``n`` points: bucket means (braille draws two points per column)."""
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
    import math

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


class HistoryChart(Widget):
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
        self._cache: tuple[tuple, Text] | None = None
        self.builds = 0

    def set_data(self, data: ChartData) -> None:
        self.data = data
        self._version += 1
        self.refresh()

    def render(self) -> Text:
        key = (self._version, self.size.width, self.size.height, self.app.theme)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        text = self._build()
        self._cache = (key, text)
        return text

    def _build(self) -> Text:
        d = self.data
        w, h = self.size.width, self.size.height
        if w < 10 or h < 4:
            return Text("")
        if not any(s.xs for s in d.series):
            return Text(d.empty_text, style="dim", justify="center")
        self.builds += 1
        app = self.app
        plt.clear_figure()
        plt.limit_size(False, False)
        plt.plotsize(w, h)
        plt.theme("clear")
        fg = rgb(app, "foreground-muted")
        plt.ticks_color(fg)
        plt.axes_color("default")
        plt.canvas_color("default")
        xs_all = [x for s in d.series for x in s.xs]
        x0, x1 = min(xs_all), max(xs_all)
        if d.ylim is not None:
            lo, hi = d.ylim
        else:
            ys_all = [y for s in d.series for y in s.ys]
            lo, hi = min(ys_all), max(ys_all)
        if hi <= lo:
            hi = lo + 1.0
        plt.ylim(lo, hi)
        ticks = nice_ticks(lo, hi, max(2, min(6, h // 3)))
        plt.yticks(ticks, [f"{t:.2f}" for t in ticks])
        if x1 > x0:
            plt.xlim(x0, x1)
        for s in d.series:
            if s.xs:
                xs, ys = downsample(s.xs, s.ys, 2 * max(1, w - 8))
                plt.plot(xs, ys, color=rgb(app, s.colour), marker="braille",
                         label=s.name if len(d.series) > 1 else None)
        cols = max(1, w - 8)
        span = max(1e-9, x1 - x0)
        for x, label, colour in d.boundaries:
            if not x0 <= x <= x1:
                continue
            c = rgb(app, colour)
            plt.vline(x, c)
            room = int((x1 - x) / span * cols) - 2
            if room >= 4:
                plt.text(label[:room], x + span / cols * 1.2, hi, color=c)
        for x, label in d.marks:
            if x0 <= x <= x1:
                c = rgb(app, "warning")
                plt.vline(x, c)
                plt.text(label, x + span / cols * 1.2, lo + (hi - lo) * 0.05, color=c)
        plt.xlabel(d.xlabel)
        out = Text.from_ansi(plt.build(), no_wrap=True)
        plt.clear_figure()
        return out
