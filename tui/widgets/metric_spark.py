"""A one-line sparkline on a *given* scale.

Textual's Sparkline scales each one to its own min/max, so two panes side by side can draw a
1.4 and a 2.4 series as the same shape. Here the screen passes the scale (shared by the panes
that are compared) and the row says it: ``accept len ▁▂▃▅▇ 1.00–3.00``. Each bar is the mean of
its bucket (a max would overstate a noisy series).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.text import Text
from textual.widget import Widget

from tui.core.sanitize import number
from tui.widgets._colours import hex_color, theme_color

BARS = "▁▂▃▄▅▆▇█"


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


class MetricSpark(Widget):
    DEFAULT_CSS = """
    MetricSpark {
        height: 1;
        padding: 0 1;
    }
    """
    LABEL_W = 12
    RIGHT_W = 20

    def __init__(self, label: str, colour: str = "primary", digits: int = 2, **kwargs) -> None:
        super().__init__(**kwargs)
        self.label = label
        self.colour = colour
        self.digits = digits
        self.data: list[float] = []
        self.lo = 0.0
        self.hi = 1.0
        self.last: float | None = None

    def set_data(self, data: Sequence[float], lo: float, hi: float, last: float | None) -> None:
        self.data = list(data)
        self.lo, self.hi, self.last = lo, hi, last
        self.refresh()

    def render(self) -> Text:
        width = max(1, self.size.width - self.LABEL_W - self.RIGHT_W - 2)
        out = Text(no_wrap=True, overflow="crop")
        out.append(f"{self.label:<{self.LABEL_W}}", style="bold")
        values = bucket_means(self.data, width)
        pad = width - len(values)
        colour = hex_color(self.app, self.colour)
        faint = theme_color(self.app, "foreground-muted")
        if pad:
            out.append(" " * pad)
        out.append(bars(values, self.lo, self.hi), style=colour)
        d = self.digits
        right = f" {number(self.last, d):>8} {number(self.lo, d)}–{number(self.hi, d)}"
        out.append(f"{right:>{self.RIGHT_W}}"[: self.RIGHT_W + 2], style=faint.hex6)
        return out
