"""A pane's first line: label, where it reads from, and its status (always true right now)."""

from __future__ import annotations

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
        self.update(self.line(self.size.width or 80), layout=False)  # one row, whatever it says

    def on_resize(self) -> None:
        if self._key is not None:
            self.update(self.line(self.size.width), layout=False)

    def line(self, width: int) -> Text:
        """Label and status always; then the counts, then where it reads from, as room allows."""
        assert self._key is not None
        label, where, status, frozen, extra, _ = self._key
        # label, path, status message: outside text, shown and never obeyed
        label, where, status, extra = visible(label), visible(where), visible(status), visible(extra)
        word = status.split(" ", 1)[0]
        colour = hex_color(self.app, STATUS_STYLE.get(word, "foreground"))
        right = Text(no_wrap=True)
        if frozen:
            right.append("view frozen · ", style=hex_color(self.app, "warning"))
        right.append(status, style=f"bold {colour}")
        need = 2 + len(label) + 2 + right.cell_len
        if extra and need + len(extra) + 2 <= width:
            counts = Text(extra + "  ", style="dim")
            right = counts + right
            need += len(extra) + 2
        left = Text(no_wrap=True, overflow="ellipsis")
        left.append("● ", style=colour)
        left.append(label, style="bold")
        if where and where != label and need + len(where) + 2 <= width:
            left.append("  ")
            left.append(where, style="dim")  # a path or command: plain text, never markup
        room = max(0, width - right.cell_len)
        left.truncate(max(1, room - 1), overflow="ellipsis")
        gap = max(1, width - left.cell_len - right.cell_len)
        return left + Text(" " * gap) + right

    @property
    def text(self) -> str:
        """The header as plain text (tests, screen readers)."""
        return " ".join(str(x) for x in self._key[:3]) if self._key else ""
