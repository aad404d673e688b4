"""The fleet's table: rows of plain text drawn line by line (Textual's line API), so that only the
rows on screen cost anything. A fleet has hundreds to thousands of rows; a DataTable measures
every cell of every row each time the rows change (a quarter of a second for 1,000 rows here),
which a sort key must not wait for.

Cells are given as plain strings already made visible (:func:`tui.core.model.sanitize.visible`):
they are never read as markup. The header is a line of its own above the rows; the cursor row is
drawn reversed; Enter posts :class:`FleetTable.Selected` with the row's index.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

GAP = 2  # spaces between columns


def fit(text: str, width: int) -> str:
    """``text`` padded or cut (with …) to ``width`` cells."""
    n = cell_len(text)
    if n <= width:
        return text + " " * (width - n)
    out, used = [], 0
    for ch in text:
        w = cell_len(ch)
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…" + " " * (width - 1 - used)


class FleetTable(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    FleetTable { height: 1fr; }
    """
    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
        Binding("enter", "select", "Open"),
    ]

    class Selected(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns: list[str] = []
        self.rows: list[list[str]] = []
        self.widths: list[int] = []
        self.cursor = 0

    # -- data ---------------------------------------------------------------------------------------
    def set_rows(self, columns: list[str], rows: list[list[str]], max_width: int = 48) -> None:
        """New rows (the cursor stays on its index, within the rows); column widths from the
        header and the cells (at most ``max_width`` cells each; longer text is cut with …)."""
        self.columns, self.rows = columns, rows
        widths = [cell_len(c) for c in columns]
        for row in rows:
            for i, cell in enumerate(row):
                n = len(cell)  # cheap first; exact cells only when it may matter
                if n > widths[i]:
                    widths[i] = min(max_width, max(widths[i], cell_len(cell)))
        self.widths = widths
        self.cursor = max(0, min(self.cursor, len(rows) - 1))
        self.virtual_size = Size(sum(widths) + GAP * max(0, len(widths) - 1) + 1, len(rows) + 1)
        self.refresh()

    def line_text(self, cells: list[str]) -> str:
        return (" " * GAP).join(fit(c, w) for c, w in zip(cells, self.widths))

    # -- drawing ------------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        if y == 0:  # the header stays on top
            text, style = self.line_text(self.columns), Style(bold=True)
        else:
            index = scroll_y + y - 1
            if index >= len(self.rows):
                return Strip.blank(width)
            text = self.line_text(self.rows[index])
            style = Style(reverse=True) if index == self.cursor and self.has_focus else Style()
            if index == self.cursor and not self.has_focus:
                style = Style(underline=True)
        text = text[scroll_x : scroll_x + width]
        return Strip([Segment(text, style)]).extend_cell_length(width).crop(0, width)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # -- the cursor -----------------------------------------------------------------------------
    def _show_cursor(self) -> None:
        # row i is drawn on virtual line i + 1 (below the header): lines i and i + 1 in view
        self.scroll_to_region(Region(0, self.cursor, 1, 2), animate=False, force=True)
        self.refresh()

    def action_cursor(self, step: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + step))
            self._show_cursor()

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.size.height - 2))

    def action_jump(self, where: int) -> None:
        if self.rows:
            self.cursor = 0 if where == 0 else len(self.rows) - 1
            self._show_cursor()

    def action_select(self) -> None:
        if self.rows:
            self.post_message(self.Selected(self.cursor))
