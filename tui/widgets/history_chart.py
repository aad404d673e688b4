"""A braille chart of the recent history: one or more series on one axis, segment boundaries as
labelled vertical lines (so a restart with a fixed config shows as a step), user marks.

The chart is drawn straight into Textual strips (rich segments), with no detour through a
plotting library's ANSI text: :func:`build_strips` is pure and costs a few milliseconds at
200 columns. :class:`HistoryChart` keeps the strips of its last few (data, size, theme) keys in an
LRU cache and hands them out from ``render_line``; a new build happens only when one of those
changed, i.e. at most as often as the screen sets new data (once a second, see
:mod:`tui.screens.watch`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from rich.segment import Segment
from rich.style import Style
from textual.cache import LRUCache
from textual.strip import Strip
from textual.widget import Widget

from tui.core.model.sanitize import number, visible
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


MIN_ROWS = 6  # below this a y axis is not readable: the pane hides the chart (z shows it big)
COLOUR_NAMES = ("primary", "secondary", "accent", "warning", "foreground-muted", "foreground")
# braille dot bits by (column in the cell, row in the cell)
_DOT = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))


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


def whole_ticks(lo: float, hi: float, count: int) -> list[float]:
    """Ticks for an x axis: whole numbers when the span allows (record numbers)."""
    ticks = nice_ticks(lo, hi, count)
    if hi - lo >= count and any(t != int(t) for t in ticks):
        ticks = [t for t in nice_ticks(math.ceil(lo), math.floor(hi), count) if t == int(t)]
    return ticks


def _tick_text(t: float) -> str:
    return f"{t:,.0f}" if t == int(t) else f"{t:g}"


class _Canvas:
    """Cells of (character, colour name) for the plot area, with braille dots."""

    def __init__(self, cols: int, rows: int) -> None:
        self.cols, self.rows = cols, rows
        self.bits = [[0] * cols for _ in range(rows)]
        self.colour: list[list[str | None]] = [[None] * cols for _ in range(rows)]
        self.chars: list[list[str | None]] = [[None] * cols for _ in range(rows)]

    def dot(self, dx: int, dy: int, colour: str) -> None:
        c, r = dx >> 1, dy >> 2
        if 0 <= c < self.cols and 0 <= r < self.rows:
            self.bits[r][c] |= _DOT[dx & 1][dy & 3]
            self.colour[r][c] = colour

    def vrun(self, dx: int, a: int, b: int, colour: str) -> None:
        for dy in range(min(a, b), max(a, b) + 1):
            self.dot(dx, dy, colour)

    def put(self, c: int, r: int, ch: str, colour: str, over: bool = True) -> None:
        if 0 <= c < self.cols and 0 <= r < self.rows and (over or not self.bits[r][c]):
            self.chars[r][c] = ch
            self.colour[r][c] = colour
            if over:
                self.bits[r][c] = 0

    def cell(self, c: int, r: int) -> tuple[str, str | None]:
        ch = self.chars[r][c]
        if ch is not None:
            return ch, self.colour[r][c]
        bits = self.bits[r][c]
        return (chr(0x2800 + bits), self.colour[r][c]) if bits else (" ", None)


def _plot_series(cv: _Canvas, s: ChartSeries, x0: float, span: float, lo: float, hi: float) -> None:
    """Bucket means per dot column, joined by vertical runs (a line, as braille draws it)."""
    dw, dh = cv.cols * 2, cv.rows * 4
    sums: dict[int, list[float]] = {}
    for x, y in zip(s.xs, s.ys):
        if y is None or not math.isfinite(y):
            continue
        dx = round((x - x0) / span * (dw - 1)) if span > 0 else 0
        acc = sums.get(dx)
        if acc is None:
            sums[dx] = [y, 1.0]
        else:
            acc[0] += y
            acc[1] += 1.0
    prev: int | None = None
    yspan = hi - lo
    for dx in sorted(sums):
        total, n = sums[dx]
        y = total / n
        dy = round((hi - y) / yspan * (dh - 1))
        dy = max(0, min(dh - 1, dy))
        if prev is None:
            cv.dot(dx, dy, s.colour)
        else:
            mid = (prev + dy) // 2
            cv.vrun(dx - 1 if dx > 0 else dx, prev, mid, s.colour)
            cv.vrun(dx, mid, dy, s.colour)
        prev = dy


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
        if all(_plottable(x) and (y is None or _plottable(y)) for x, y in zip(s.xs, s.ys)):
            series.append(replace(s, name=visible(s.name)))
            continue
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


def build_strips(d: ChartData, w: int, h: int, colours: dict[str, tuple[int, int, int]]) -> list[Strip]:
    """The chart as ``h`` strips of width ``w``; pure (no app access)."""
    styles = {name: Style(color=f"rgb{c}") for name, c in colours.items()}
    muted = styles.get("foreground-muted", Style(dim=True))
    blank = [Strip.blank(w) for _ in range(h)]
    if w < 10 or h < 3:
        return blank
    d = _finite(d)
    if not any(s.xs for s in d.series):
        text = d.empty_text[:w]
        pad = (w - len(text)) // 2
        blank[h // 2] = Strip(
            [Segment(" " * pad), Segment(text, muted), Segment(" " * (w - pad - len(text)))]
        )
        return blank
    xs_all = [x for s in d.series for x in s.xs]
    x0, x1 = min(xs_all), max(xs_all)
    if d.ylim is not None:
        lo, hi = d.ylim
    else:
        ys = [y for s in d.series for y in s.ys if y is not None and math.isfinite(y)]
        lo, hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
    if hi <= lo:
        hi = lo + 1.0
    rows = h - 3  # plot rows; then the axis, its tick labels and the axis title
    yticks = nice_ticks(lo, hi, max(2, min(6, rows // 2)))
    ylabels = [number(t) for t in yticks]
    yw = max(len(t) for t in ylabels) if ylabels else 4
    cols = w - yw - 2  # label, axis line, one column of margin on the right
    if cols < 4 or rows < 1:
        return blank
    span = x1 - x0
    cv = _Canvas(cols, rows)
    for s in d.series:
        if s.xs:
            _plot_series(cv, s, x0, span, lo, hi)

    def col_of(x: float) -> int:
        return round((x - x0) / span * (cols - 1)) if span > 0 else 0

    # boundaries: a vertical line through empty cells, the label along the top row
    placed = sorted((col_of(x), label, colour) for x, label, colour in d.boundaries if x0 <= x <= x1)
    for i, (c, label, colour) in enumerate(placed):
        for r in range(rows):
            cv.put(c, r, "│", colour, over=False)
        room = (placed[i + 1][0] if i + 1 < len(placed) else cols) - c - 2
        for k, ch in enumerate(label[: max(0, room)] if room >= 4 else ""):
            cv.put(c + 1 + k, 0, ch, colour)
    for x, label in d.marks:
        if x0 <= x <= x1:
            c = col_of(x)
            for r in range(rows):
                cv.put(c, r, "┆", "warning", over=False)
            for k, ch in enumerate(label):
                cv.put(c + 1 + k, rows - 1, ch, "warning")
    tick_rows = {
        max(0, min(rows - 1, round((hi - t) / (hi - lo) * (rows - 1)))): s for t, s in zip(yticks, ylabels)
    }
    strips: list[Strip] = []
    for r in range(rows):
        tick = tick_rows.get(r)
        segs = [Segment(f"{tick:>{yw}}┤" if tick is not None else " " * yw + "│", muted)]
        run: list[str] = []
        run_style: Style | None = None
        for c in range(cols):
            ch, cell_colour = cv.cell(c, r)
            st = styles.get(cell_colour) if cell_colour else None
            if st is not run_style and run:
                segs.append(Segment("".join(run), run_style))
                run = []
            run_style = st
            run.append(ch)
        if run:
            segs.append(Segment("".join(run), run_style))
        segs.append(Segment(" "))
        strips.append(Strip(segs))
    # the x axis and its ticks
    xticks = whole_ticks(x0, x1, max(2, min(8, cols // 12))) if span > 0 else [x0]
    axis = ["─"] * cols
    labels = [" "] * (cols + yw + 2)
    last_end = -1
    for t in xticks:
        c = col_of(t)
        if not 0 <= c < cols:
            continue
        axis[c] = "┬"
        text = _tick_text(t)
        start = max(0, min(cols + yw + 2 - len(text), yw + 1 + c - len(text) // 2))
        if start > last_end:
            labels[start : start + len(text)] = list(text)
            last_end = start + len(text)
    strips.append(Strip([Segment(" " * yw + "└" + "".join(axis) + " ", muted)]))
    strips.append(Strip([Segment("".join(labels)[:w], muted)]))
    # the axis title, with a legend when there are several series
    title: list[Segment] = []
    used = 0
    if len(d.series) > 1:
        for s in d.series:
            piece = f"■ {s.name}  "
            title.append(Segment(piece, styles.get(s.colour)))
            used += len(piece)
    rest = d.xlabel[: max(0, w - used)]
    pad = max(0, (w - used - len(rest)) // 2)
    title = (
        [Segment(" " * pad), *title, Segment(rest, muted)] if used == 0 else [*title, Segment(rest, muted)]
    )
    strips.append(Strip(title).crop(0, w).extend_cell_length(w))
    return [s.crop(0, w).extend_cell_length(w) for s in strips]


class HistoryChart(Widget):
    """Shows the chart of the data last set; built on first draw after a change of data, size or
    theme, and kept (an LRU of strips) until the next."""

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
        self.builds = 0

    def set_data(self, data: ChartData) -> None:
        self.data = data
        self._version += 1
        self.refresh()

    @property
    def settled(self) -> bool:
        """The chart on screen shows the newest data at the current size (tests wait for this)."""
        return self._built_key == self._key()

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
