"""A pane's first line: label, where it reads from, and its status (always true right now)."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text

from tui.core.model.sanitize import visible
from tui.panes.figures import fit_label
from tui.widgets._colours import hex_color
from tui.widgets.strip_lines import StripLines

LABEL_MIN = 16  # cells of the label kept before the counts are shown

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


class PaneHeader(StripLines):
    DEFAULT_CSS = """
    PaneHeader {
        height: 1;
        padding: 0 1;
        background: $panel;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._key: tuple | None = None

    def show(
        self,
        label: str,
        where: str,
        status: str,
        *,
        frozen: bool = False,
        extra: str = "",
        peers: tuple[str, ...] = (),
    ) -> None:
        """``peers``: the labels of every pane, so that a label too long for the header is cut to
        the part that tells it from the others (:func:`tui.panes.figures.fit_label`)."""
        key = (label, where, status, frozen, extra, peers, self.app.theme)
        if key == self._key:
            return
        self._key = key
        width = self.size.width or 80
        self.set_content(self.line(width), width)  # one row, whatever it says

    def on_resize(self) -> None:
        if self._key is not None:
            self.set_content(self.line(self.size.width), self.size.width)

    def line(self, width: int) -> Text:
        """What survives longest: the status whole, the label (whole when it fits, else the part
        that tells it from the other panes), then the counts (whole or not at all: a number is
        never cut), then where it reads from."""
        assert self._key is not None
        label, where, status, frozen, extra, peers, _ = self._key
        # label, path, status message: outside text, shown and never obeyed
        label, where, status, extra = visible(label), visible(where), visible(status), visible(extra)
        peers = tuple(visible(p) for p in peers)
        word = status.split(" ", 1)[0]
        colour = hex_color(self.app, STATUS_STYLE.get(word, "foreground"))
        right = Text(no_wrap=True)
        if frozen:
            right.append("view frozen · ", style=hex_color(self.app, "warning"))
        right.append(status, style=f"bold {colour}")
        room = width - 2 - 1 - right.cell_len  # "● ", a gap, the status
        least = cell_len(label)  # the label whole when it fits; else its short form makes room for the counts
        if least > room:
            least = cell_len(fit_label(label, min(LABEL_MIN, room), peers))
        counts = ""
        for form in (extra, extra.rsplit(" · ", 1)[-1]) if extra else ():
            if least + 3 + cell_len(form) <= room:
                counts = form
                break
        if counts:
            right = Text(counts + "  ", style="dim") + right
            room -= cell_len(counts) + 3  # with two spaces after them (and one more before)
        shown = fit_label(label, max(1, room), peers)
        left = Text(no_wrap=True)
        left.append("● ", style=colour)
        left.append(shown, style="bold")
        if where and where != label and shown == label and cell_len(label) + 2 + cell_len(where) <= room:
            left.append("  ")
            left.append(where, style="dim")  # a path or command: plain text, never markup
        left.truncate(max(1, width - right.cell_len - 1))
        gap = max(1, width - left.cell_len - right.cell_len)
        return left + Text(" " * gap) + right

    @property
    def text(self) -> str:
        """The header as plain text (tests, screen readers)."""
        return " ".join(str(x) for x in self._key[:3]) if self._key else ""
