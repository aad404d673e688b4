"""A widget whose content is laid out once, as lines, and redrawn row by row.

``Static.update`` hands Textual a renderable that is laid out again at every repaint and marks the
whole widget dirty. The panes' numbers and headers change a few digits a few times a second, so
:class:`StripLines` lays its content out once (at the width it has), keeps one strip per row, and
marks dirty only the rows whose strips changed: a new running mean redraws one row, not the block.
Its height is its number of rows (a layout pass only when that number changes).
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.segment import Segment
from rich.text import Text
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget


class StripLines(Widget):
    DEFAULT_CSS = """
    StripLines {
        height: auto;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.lines: list[Strip] = []

    def set_content(self, content: RenderableType, width: int | None = None) -> None:
        """Lay ``content`` out at ``width`` cells (the content width by default) and show it."""
        console = self.app.console
        width = max(1, width or self.size.width or 80)
        if isinstance(content, Text) and "\n" not in content.plain and content.cell_len <= width:
            # one row that fits (a header): its segments as they are, without a layout pass
            segments = Segment.apply_style(content.render(console, end=""), self.visual_style.rich_style)
            self.set_lines([Strip(segments, content.cell_len)])
            return
        options = console.options.update(width=width, height=None, no_wrap=False, highlight=False)
        base = self.visual_style.rich_style  # the widget's own colours under the content's styles
        lines = console.render_lines(content, options, style=base, pad=False)
        self.set_lines([Strip(line) for line in lines])

    def set_lines(self, lines: list[Strip]) -> None:
        """Show ``lines``: the rows that changed are redrawn (all of them when the height changed)."""
        old, self.lines = self.lines, lines
        if len(old) != len(lines):
            self.refresh(layout=True)
            return
        width = self.size.width
        dirty = [Region(0, y, width, 1) for y, (a, b) in enumerate(zip(old, lines)) if a != b]
        if dirty:
            self.refresh(*dirty)

    @property
    def plain(self) -> str:
        """The content as plain text, one row per line (tests, screen readers)."""
        return "\n".join(line.text.rstrip() for line in self.lines)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines)

    def render_line(self, y: int) -> Strip:
        if 0 <= y < len(self.lines):
            return self.lines[y]
        return Strip.blank(self.size.width, self.visual_style.rich_style)
