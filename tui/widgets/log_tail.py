"""The raw tail of a pane's log, metric lines highlighted, with a filter.

Log text is never parsed as Rich markup (SGLang lines begin with ``[2026-… TP0]``): every line
becomes a ``rich.text.Text`` built from the plain string.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, RichLog

from tui.pane_state import RawLine
from tui.widgets._colours import hex_color

MAX_LINES = 500
PER_TICK = 200  # lines written per refresh at most (a fast log only shows its newest lines)
_NUMBERS = re.compile(r"(accept len|accept rate|Mean acceptance length|Avg Draft acceptance rate|"
                      r"acceptance rate)(:?\s*)([\d.]+%?)")

KIND_STYLE = {"metric": "primary", "marker": "accent", "malformed": "error", "event": "secondary",
              "stderr": "warning", "mark": "warning"}


class LogTail(Vertical):
    DEFAULT_CSS = """
    LogTail {
        height: 1fr;
        min-height: 5;
        border-top: solid $panel;
    }
    LogTail RichLog {
        height: 1fr;
        background: $surface;
        scrollbar-size-vertical: 1;
        scrollbar-size-horizontal: 1;
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
        self._seen = 0
        self.written = 0

    def compose(self) -> ComposeResult:
        yield RichLog(max_lines=MAX_LINES, wrap=False, markup=False, highlight=False, auto_scroll=True)
        yield Input(placeholder="filter the log tail (text, case-insensitive; empty: all lines)")

    @property
    def log_widget(self) -> RichLog:
        return self.query_one(RichLog)

    def _matches(self, line: RawLine) -> bool:
        return not self.filter or self.filter in line.text.lower()

    def _render_line(self, line: RawLine) -> Text:
        text = Text(line.text, no_wrap=True)  # plain text, never markup
        style = KIND_STYLE.get(line.kind)
        if style is not None:
            colour = hex_color(self.app, style)
            if line.kind == "metric":
                text.stylize(colour)
                for m in _NUMBERS.finditer(line.text):
                    text.stylize(f"bold reverse {colour}", m.start(3), m.end(3))
            else:
                text.stylize(colour)
        return text

    def sync(self, raw: Iterable[RawLine], newest: int) -> None:
        """Write the lines that arrived since the last call (at most PER_TICK of them)."""
        if newest == self._seen:
            return
        fresh = []
        for r in reversed(raw):  # newest first: stop at what was already written
            if r.seq <= self._seen or len(fresh) >= 4 * PER_TICK:
                break
            fresh.append(r)
        fresh.reverse()
        self._seen = newest
        shown = [r for r in fresh if self._matches(r)][-PER_TICK:]
        log = self.log_widget
        for r in shown:
            log.write(self._render_line(r))
        self.written += len(shown)

    def rebuild(self, raw: Iterable[RawLine], newest: int) -> None:
        self.log_widget.clear()
        self._seen = 0
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
            if self.parent is not None:
                self.parent.focus()
