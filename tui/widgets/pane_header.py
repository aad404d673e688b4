"""A pane's first line: label, where it reads from, and its status (always true right now)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from tui.core.sanitize import visible
from tui.widgets._colours import hex_color

STATUS_STYLE = {
    "live": "success",
    "replaying": "success",
    "connecting": "accent",
    "seeking": "accent",
    "idle": "warning",
    "waiting": "warning",
    "paused": "warning",
    "frozen": "warning",
    "reconnecting": "warning",
    "error": "error",
    "ended": "foreground-muted",
}


class PaneHeader(Static):
    DEFAULT_CSS = """
    PaneHeader {
        height: 1;
        padding: 0 1;
        background: $panel;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", **kwargs)
        self._key: tuple | None = None

    def show(self, label: str, where: str, status: str, *, frozen: bool = False, extra: str = "") -> None:
        key = (label, where, status, frozen, extra, self.app.theme)
        if key == self._key:
            return
        self._key = key
        # label, path, status message: outside text, shown and never obeyed
        label, where, status, extra = visible(label), visible(where), visible(status), visible(extra)
        word = status.split(" ", 1)[0]
        colour = hex_color(self.app, STATUS_STYLE.get(word, "foreground"))
        left = Text(no_wrap=True, overflow="ellipsis")
        left.append("● ", style=colour)
        left.append(label, style="bold")
        left.append("  ")
        left.append(where, style="dim")  # a path or command: plain text, never markup
        right = Text(no_wrap=True, justify="right")
        if extra:
            right.append(extra + "  ", style="dim")
        if frozen:
            right.append("view frozen · ", style=hex_color(self.app, "warning"))
        right.append(status, style=f"bold {colour}")
        grid = Table.grid(expand=True, padding=(0, 1))
        grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        grid.add_column(justify="right", no_wrap=True)
        grid.add_row(left, right)
        self.update(grid)

    @property
    def text(self) -> str:
        """The header as plain text (tests, screen readers)."""
        return " ".join(str(x) for x in self._key[:3]) if self._key else ""
