"""The one layout system of the watch screen: how many panes go in a row, and what a pane of a
given size shows (its tier). Pure arithmetic on sizes, so it is tested without a terminal.

* :func:`grid_shape` puts N panes in a grid whose columns are at least ``MIN_PANE_W`` wide
  (the numbers of a pane fit without wrapping; nothing runs off the right edge), as few rows as
  that allows, the columns balanced so that no row is left mostly empty.
* :func:`pane_tier` names what a pane shows at its inner size. ``full``: every block (numbers
  table, three sparklines, chart, segment table, verdict, breakdown, log tail). ``compact``: the
  facts that must survive first (status, label, segment mean ± CI with n, the sparklines, the
  verdict) with the numbers in their short form; no segment table or breakdown; ``narrow`` (tall
  enough) also keeps the log tail when it is switched on. In every tier
  the chart is shown only when there is room left for a readable y axis
  (:data:`tui.widgets.history_chart.MIN_ROWS`; in compare from ``PANE_MIN_ROWS``); ``z`` maximises the focused pane to see the rest.
  Further tiers (smaller terminals) extend this function and the CSS classes it names
  (``NumbersPanel.-compact`` for the short numbers; ``SourcePane.-compact`` and ``-narrow`` for
  the blocks left out).
"""

from __future__ import annotations

import math

MIN_PANE_H = 10  # outer rows below which panes stop shrinking and the grid scrolls instead
MIN_PANE_W = 48  # outer columns a pane needs: border + "accept len 2.41 ± 0.03 (n=12,345)  last 2.50"
FULL_MIN_W = 62  # inner size from which a pane shows every block
FULL_MIN_H = 22
TIERS = ("full", "narrow", "compact")


def grid_shape(n: int, width: int, height: int = 0) -> tuple[int, int]:
    """(columns, rows) for ``n`` panes in ``width`` columns (``height`` is not used yet: rows
    share it equally)."""
    if n <= 0:
        return (1, 1)
    cols = max(1, min(n, width // MIN_PANE_W))
    rows = math.ceil(n / cols)
    cols = math.ceil(n / rows)  # balance: 4 panes in 3 columns become 2 × 2
    return (cols, rows)


def row_height(rows: int, height: int) -> int | None:
    """Fixed outer rows per grid row when ``rows`` rows would not get ``MIN_PANE_H`` each in
    ``height`` (the grid then scrolls, and the panes off the screen are not drawn); else None:
    the rows share the height."""
    return MIN_PANE_H if rows and height // rows < MIN_PANE_H else None


def pane_tier(inner_width: int, inner_height: int) -> str:
    """What a pane with this content size shows (one of :data:`TIERS`)."""
    if inner_height < FULL_MIN_H:
        return "compact"
    return "full" if inner_width >= FULL_MIN_W else "narrow"
