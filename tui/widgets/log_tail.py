"""The raw tail of a pane's log, metric lines highlighted, with a filter.

It draws only what fits: the newest lines (of those that match the filter) from the pane's
bounded raw deque, each cut at the width, at most once per tick. A fast log therefore costs the
same as a slow one (writing every line into a scrollback widget does not scale). Each line is
styled once: its strip is kept in an LRU cache (by line, width and theme) and ``render_line``
hands it out again while the line scrolls up the view.

Log text is never parsed as Rich markup (SGLang lines begin with ``[2026-… TP0]``): every line
becomes a ``rich.text.Text`` built from the plain string.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.cache import LRUCache
from textual.containers import Vertical
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Input

from tui.core.sanitize import visible
from tui.core.sources.lines import oversized_bytes
from tui.pane_state import RawLine
from tui.widgets._colours import hex_color

MAX_CHARS = 400  # the part of a line that is looked at (args dumps run to thousands of characters)
_NUMBERS = re.compile(
    r"(accept len|accept rate|Mean acceptance length|Avg Draft acceptance rate|"
    r"acceptance rate)(:?\s*)([\d.]+%?)"
)

KIND_STYLE = {
    "metric": "primary",
    "marker": "accent",
    "malformed": "error",
    "event": "secondary",
    "stderr": "warning",
    "mark": "warning",
}


class TailView(Widget):
    """The visible lines themselves."""

    DEFAULT_CSS = """
    TailView {
        height: 1fr;
        background: $surface;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.lines: list[RawLine] = []
        self._cache: LRUCache[tuple, Strip] = LRUCache(256)
        self.built = 0  # lines styled so far (tests)

    def render_line(self, y: int) -> Strip:
        width = max(1, self.size.width)
        height = self.size.height
        shown = self.lines[-height:] if height else []
        if y >= len(shown):
            return Strip.blank(width)
        line = shown[y]
        key = (line.seq, line.kind, width, self.app.theme)
        strip = self._cache.get(key)
        if strip is None:
            colours = {k: hex_color(self.app, v) for k, v in KIND_STYLE.items()}
            text = render_line(line, colours, width)
            strip = Strip(text.render(self.app.console), text.cell_len).extend_cell_length(width)
            self._cache[key] = strip
            self.built += 1
        return strip


def render_line(line: RawLine, colours: dict[str, str], width: int) -> Text:
    raw = line.text[:MAX_CHARS]
    nbytes = oversized_bytes(raw)
    # a control sequence in a log line is shown, never obeyed
    raw = visible(raw) if nbytes is None else f"[oversized line: {nbytes:,} bytes, not read]"
    text = Text(raw, no_wrap=True, overflow="ellipsis")  # plain text, never markup
    colour = colours.get(line.kind)
    if colour is not None:
        text.stylize(colour)
        if line.kind == "metric":
            for m in _NUMBERS.finditer(raw):
                text.stylize(f"bold reverse {colour}", m.start(3), m.end(3))
    text.truncate(width, overflow="ellipsis")
    return text


class LogTail(Vertical):
    DEFAULT_CSS = """
    LogTail {
        height: 1fr;
        min-height: 5;
        border-top: solid $panel;
    }
    LogTail Input {
        display: none;
        height: 3;
        border: tall $accent;
    }
    LogTail.-filtering Input {
        display: block;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.filter = ""
        self._seen = -1
        self.shown: list[RawLine] = []

    def compose(self) -> ComposeResult:
        yield TailView()
        yield Input(placeholder="filter the log tail (text, case-insensitive; empty: all lines)")

    def _matches(self, line: RawLine) -> bool:
        return not self.filter or self.filter in line.text.lower()

    def sync(self, raw: Sequence[RawLine], newest: int) -> None:
        """Show the newest matching lines (no work when nothing arrived)."""
        if newest == self._seen:
            return
        self._seen = newest
        view = self.query_one(TailView)
        room = max(100, view.size.height)  # more than fit: a taller view after a resize is still full
        picked: list[RawLine] = []
        for r in reversed(raw):
            if self._matches(r):
                picked.append(r)
                if len(picked) >= room:
                    break
        picked.reverse()
        self.shown = picked
        view.lines = picked
        view.refresh()

    def rebuild(self, raw: Sequence[RawLine], newest: int) -> None:
        self._seen = -1
        self.sync(raw, newest)

    def open_filter(self) -> None:
        self.add_class("-filtering")
        inp = self.query_one(Input)
        inp.value = self.filter
        inp.focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.filter = event.value.strip().lower()
        self.remove_class("-filtering")
        self.post_message(self.FilterChanged(self.filter))

    class FilterChanged(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def close_filter(self) -> None:
        self.remove_class("-filtering")

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape" and self.has_class("-filtering"):
            event.stop()
            self.close_filter()
            if isinstance(self.parent, Widget):
                self.parent.focus()

    def on_resize(self) -> None:
        self._seen = -1
