"""A one-line sparkline on a *given* scale.

Textual's Sparkline scales each one to its own min/max, so two panes side by side can draw a
1.4 and a 2.4 series as the same shape. Here the screen passes the scale (shared by the panes
that are compared) and the row says it: ``accept len ▁▂▃▅▇ 1.00–3.00``. Each bar is the mean of
its bucket (a max would overstate a noisy series).

The row is built once per change of data, width or theme and kept as a strip (``render_line``
hands it out again on every repaint of the screen around it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.text import Text
from textual.app import App
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from tui.core.model.sanitize import number
from tui.widgets._colours import hex_color, theme_color

BARS = "▁▂▃▄▅▆▇█"
MIN_BARS = 16  # bars a row keeps before its scale is left out


def bucket_means(data: Sequence[float], width: int) -> list[float]:
    n = len(data)
    if n <= width:
        return list(data)
    out = []
    for i in range(width):
        a, b = i * n // width, (i + 1) * n // width
        chunk = data[a:b] if b > a else data[a : a + 1]
        out.append(sum(chunk) / len(chunk))
    return out


def bars(values: Sequence[float], lo: float, hi: float) -> str:
    span = hi - lo
    top = len(BARS) - 1
    if not span > 0 or not math.isfinite(span):
        return BARS[top // 2] * len(values)
    return "".join(_bar(x, lo, span, top) for x in values)


def _bar(x: float, lo: float, span: float, top: int) -> str:
    f = (x - lo) / span * top
    if not math.isfinite(f):  # a value out of any scale (inf, nan): full, empty or a gap
        return BARS[top] if f > 0 else BARS[0] if f < 0 else " "
    return BARS[min(top, max(0, round(f)))]


class SparkRow:
    """One sparkline row (label, bars on the given scale, last value and the scale); its strip is
    built once per change of data, width or theme and handed out again on every repaint."""

    LABEL_W = 12
    RIGHT_W = 20

    def __init__(self, label: str, colour: str = "primary", digits: int = 2) -> None:
        self.label = label
        self.colour = colour
        self.digits = digits
        self.data: list[float] = []
        self.lo = 0.0
        self.hi = 1.0
        self.last: float | None = None
        self._strip: Strip | None = None
        self._strip_key: tuple | None = None
        self.builds = 0

    def set_data(self, data: Sequence[float], lo: float, hi: float, last: float | None) -> bool:
        """New values; False when they are the ones shown already."""
        data = list(data)
        if data == self.data and (lo, hi, last) == (self.lo, self.hi, self.last):
            return False
        self.data = data
        self.lo, self.hi, self.last = lo, hi, last
        self._strip_key = None
        return True

    def strip(self, app: App, width: int) -> Strip:
        key = (width, app.theme)
        if self._strip is None or key != self._strip_key:
            self._strip = Strip(self.row_text(app, width).render(app.console)).crop_extend(0, width, None)
            self._strip_key = key
            self.builds += 1
        return self._strip

    def row_text(self, app: App, total: int) -> Text:
        """Label, bars, last value and scale; in a narrow row the scale goes first (whole: a
        number is never cut) so that at least ``MIN_BARS`` bars are left."""
        d = self.digits
        right = f" {number(self.last, d):>8} {number(self.lo, d)}–{number(self.hi, d)}"
        right = f"{right:>{self.RIGHT_W}}"
        if total - self.LABEL_W - len(right) - 1 < MIN_BARS:
            right = f" {number(self.last, d):>8}"
        width = max(1, total - self.LABEL_W - len(right) - 1)
        out = Text(no_wrap=True, overflow="crop")
        out.append(f"{self.label:<{self.LABEL_W}}", style="bold")
        values = bucket_means(self.data, width)
        pad = width - len(values)
        colour = hex_color(app, self.colour)
        faint = theme_color(app, "foreground-muted")
        if pad:
            out.append(" " * pad)
        out.append(bars(values, self.lo, self.hi), style=colour)
        out.append(right, style=faint.hex6)
        return out


class MetricSparks(Widget):
    """A pane's sparkline rows in one widget (one widget, not one per row: the screen's
    compositor walks every widget of a region it redraws, so fewer widgets cost less)."""

    DEFAULT_CSS = """
    MetricSparks {
        height: auto;
        padding: 0 1;
    }
    """

    def __init__(self, rows: list[SparkRow], **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows = rows

    def set_data(self, index: int, data: Sequence[float], lo: float, hi: float, last: float | None) -> None:
        if self.rows[index].set_data(data, lo, hi, last):
            self.refresh()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.rows)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if 0 <= y < len(self.rows):
            return self.rows[y].strip(self.app, width)
        return Strip.blank(width)
