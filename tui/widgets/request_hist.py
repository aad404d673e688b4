"""The per-request accept length distribution (issue 12) of the segment shown: histogram bars
(each source's share of its requests, so A and B of a compare sit on the same axis, overlaid
row by row) and the percentiles with their numbers. Hidden when no source has per-request
records."""

from __future__ import annotations

import math

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from tui.core.model.sanitize import visible
from tui.core.stats.requests import BIN_WIDTH, LO, RequestSet
from tui.panes.pane_numbers import number_or_dash
from tui.widgets._colours import hex_color

BAR_W = 20
MAX_ROWS = 8

Shown = tuple[str, RequestSet]


def _bar(frac: float, width: int = BAR_W) -> str:
    frac = min(1.0, max(0.0, frac))
    full = int(frac * width)
    part = " ▏▎▍▌▋▊▉"[int((frac * width - full) * 8)] if full < width else ""
    return ("█" * full + part).ljust(width)


def rows(sets: list[RequestSet], max_rows: int = MAX_ROWS) -> list[tuple[float, float, list[float]]]:
    """(low edge, high edge, each set's share of its requests in that range), low to high, over
    the bins any set uses, grouped into at most ``max_rows`` rows of whole bins."""
    nz = [i for s in sets if s.n for i, c in enumerate(s.bins) if c]
    if not nz:
        return []
    first, last = min(nz), max(nz)
    per = max(1, math.ceil((last - first + 1) / max_rows))
    out = []
    for lo in range(first, last + 1, per):
        hi = min(lo + per, last + 1)
        shares = [sum(s.bins[lo:hi]) / s.n if s.n else 0.0 for s in sets]
        out.append((LO + lo * BIN_WIDTH, LO + hi * BIN_WIDTH, shares))
    return out


class RequestHist(Static):
    DEFAULT_CSS = """
    RequestHist {
        height: auto;
        padding: 0 1;
        display: none;
    }
    RequestHist.-shown {
        display: block;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", **kwargs)
        self._key: tuple | None = None
        self.table: Table | None = None  # what is shown

    def show(self, *shown: tuple[str, RequestSet | None]) -> None:
        """``(label, requests)`` of this source and, in a compare, of the other one."""
        sets: list[Shown] = [(label, rs) for label, rs in shown if rs is not None and rs.n]
        self.set_class(bool(sets), "-shown")
        key = (tuple((label, rs.n, rs.total, tuple(rs.step_histogram)) for label, rs in sets), self.app.theme)
        if not sets or key == self._key:
            return
        self._key = key
        colours = [hex_color(self.app, "primary"), hex_color(self.app, "secondary")]
        t = Table.grid(padding=(0, 1))
        t.add_column(no_wrap=True)
        for _ in sets:
            t.add_column(no_wrap=True)
        t.add_row(
            Text("accept len / request", style="bold"),
            *(Text(visible(label)[:BAR_W], style=colours[i % 2]) for i, (label, _) in enumerate(sets)),
        )
        for lo, hi, shares in rows([rs for _, rs in sets]):
            t.add_row(
                Text(f"{lo:5.2f}–{hi:5.2f}"),
                *(Text(_bar(sh), style=colours[i % 2]) for i, sh in enumerate(shares)),
            )
        for i, (label, rs) in enumerate(sets):
            p = rs.percentiles() or {}
            line = Text(visible(label)[:16], style=colours[i % 2])
            line.append(
                f"  n={rs.n}  mean {number_or_dash(rs.total / rs.n)}  p10 {number_or_dash(p.get('p10'))}"
                f"  p50 {number_or_dash(p.get('p50'))}  p90 {number_or_dash(p.get('p90'))}"
            )
            if rs.with_steps:
                line.append(f"  steps accepting 0..k: {rs.step_histogram}")
            t.add_row(line)
        self.table = t
        self.update(t)
