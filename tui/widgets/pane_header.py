"""A pane's first line: label (A / B in compare), where it reads from, and its status (always true
right now); what fits is chosen by the label policy (:func:`tui.panes.labels.fit_header`)."""

from __future__ import annotations

from rich.text import Text

from tui.core.model.sanitize import visible
from tui.panes.labels import HeaderFit, fit_header
from tui.widgets._colours import hex_color
from tui.widgets.strip_lines import StripLines

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
        tag: str = "",
    ) -> None:
        """``peers``: the labels of every pane, so that a label too long for the header is cut to
        the part that tells it from the others; ``tag``: "A" / "B" in compare."""
        key = (label, where, status, frozen, extra, peers, tag, self.app.theme)
        if key == self._key:
            return
        self._key = key
        width = self.size.width or 80
        self.set_content(self.line(width), width)  # one row, whatever it says

    def on_resize(self) -> None:
        if self._key is not None:
            self.set_content(self.line(self.size.width), self.size.width)

    def fitted(self, width: int) -> HeaderFit:
        """The parts shown at ``width`` (label, status, counts, where: outside text made visible)."""
        assert self._key is not None
        label, where, status, frozen, extra, peers, tag, _ = self._key
        # label, path, status message: outside text, shown and never obeyed
        return fit_header(
            visible(label),
            visible(status),
            width,
            peers=tuple(visible(p) for p in peers),
            tag=tag,
            where=visible(where),
            extra=visible(extra),
            frozen=frozen,
        )

    def line(self, width: int) -> Text:
        fit = self.fitted(width)
        status = self._key[2] if self._key else ""
        colour = hex_color(self.app, STATUS_STYLE.get(status.split(" ", 1)[0], "foreground"))
        left = Text(no_wrap=True)
        left.append("● ", style=colour)
        if fit.tag:
            left.append(f"{fit.tag} ", style=f"bold reverse {hex_color(self.app, 'accent')}")
        left.append(fit.label, style="bold")
        if fit.where:
            left.append("  ")
            left.append(fit.where, style="dim")  # a path or command: plain text, never markup
        right = Text(no_wrap=True)
        if fit.counts:
            right.append(fit.counts + "  ", style="dim")
        head, word = "", fit.status
        if fit.status.startswith(("view frozen · ", "frozen")):
            head, sep, word = fit.status.partition(" · ")
            head += sep
        if head:
            right.append(head, style=hex_color(self.app, "warning"))
        right.append(word, style=f"bold {colour}")
        gap = max(1, width - left.cell_len - right.cell_len)
        return left + Text(" " * gap) + right

    @property
    def text(self) -> str:
        """The header as plain text (tests, screen readers): the label whole, then the status."""
        return " ".join(str(x) for x in self._key[:3]) if self._key else ""

    @property
    def shown(self) -> str:
        """What the header shows now, as plain text."""
        return self.fitted(self.size.width or 80).text if self._key else ""
