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
from textual.content import Content
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Input

from tui.core.model.sanitize import visible
from tui.core.sources.lines import oversized_bytes
from tui.panes.line_filter import LineFilter, parse_filter
from tui.panes.state import RawLine
from tui.widgets._colours import hex_color
from tui.widgets.cells import exact_cells

NUMBER_W = 7  # the line-number column (a line number is shown whole: up to 9,999,999)
NUMBERS_MIN_W = 60  # views narrower than this show no line numbers
FILTER_HINT = "filter the log tail (text, case-insensitive; re:EXPR a regular expression; empty: all lines)"
WRAP_ROWS = 6  # rows one wrapped line may take
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
        self.hit: int | None = None  # the raw seq of the line a search found (highlighted)
        self.wrap = False  # long lines wrapped (`w`) instead of cut at the width
        self._cache: LRUCache[tuple, list[Strip]] = LRUCache(256)
        self.built = 0  # lines styled so far (tests)

    def render_line(self, y: int) -> Strip:
        width = max(1, self.size.width)
        height = self.size.height
        if self.wrap:
            rows = self._wrapped_rows(width, height)
            return rows[y] if y < len(rows) else Strip.blank(width)
        shown = self.lines[-height:] if height else []
        if y >= len(shown):
            return Strip.blank(width)
        return self._strips(shown[y], width)[0]

    def _strips(self, line: RawLine, width: int) -> list[Strip]:
        """A line's rows: one (cut at the width) or, wrapped, up to ``WRAP_ROWS``."""
        hit = line.seq == self.hit
        key = (line.seq, line.kind, width, self.app.theme, hit, self.wrap)
        strips = self._cache.get(key)
        if strips is None:
            colours = {k: hex_color(self.app, v) for k, v in KIND_STYLE.items()}
            numbers = width >= NUMBERS_MIN_W
            text = render_line(
                line, colours, MAX_CHARS + NUMBER_W + 1 if self.wrap else width, numbers=numbers
            )
            if hit:
                text.stylize("reverse")
            if self.wrap:
                text.no_wrap, text.overflow = False, "fold"
                pieces = list(text.wrap(self.app.console, width))[:WRAP_ROWS]
            else:
                pieces = [text]
            strips = [
                Strip(t.render(self.app.console), t.cell_len).crop_extend(0, width, None) for t in pieces
            ]
            self._cache[key] = strips
            self.built += 1
        return strips

    def _wrapped_rows(self, width: int, height: int) -> list[Strip]:
        """The newest lines, wrapped, that fill the view (the last row is the newest line's end)."""
        rows: list[Strip] = []
        for line in reversed(self.lines):
            if len(rows) >= height:
                break
            rows[:0] = self._strips(line, width)
        return rows[-height:] if height else []


def render_line(line: RawLine, colours: dict[str, str], width: int, *, numbers: bool = False) -> Text:
    """One log line, plain text styled by its kind; with ``numbers``, its line number in the
    source first (blank for lines that have none: events, marks)."""
    raw = line.text[:MAX_CHARS]
    nbytes = oversized_bytes(raw)
    # a control sequence in a log line is shown, never obeyed
    raw = visible(raw) if nbytes is None else f"[oversized line: {nbytes:,} bytes, not read]"
    raw = exact_cells(raw)  # each character as wide as counted: the row ends at the pane's border
    text = Text(raw, no_wrap=True, overflow="ellipsis")  # plain text, never markup
    colour = colours.get(line.kind)
    if colour is not None:
        text.stylize(colour)
        if line.kind == "metric":
            for m in _NUMBERS.finditer(raw):
                text.stylize(f"bold reverse {colour}", m.start(3), m.end(3))
    if numbers:
        no = "" if line.line_no is None else str(line.line_no)
        text = Text(f"{no:>{NUMBER_W}} ", style="dim", no_wrap=True, overflow="ellipsis") + text
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
        self.filter = ""  # the filter as typed (``re:`` for a regular expression)
        self._filter = LineFilter()
        self.search = ""  # the text `ctrl+f` looks for (case-insensitive)
        self.back = 0  # lines scrolled back from the newest (0: follow the newest)
        self._kept: list[RawLine] = []  # the matching lines while scrolled back (a still picture)
        self._mode = "filter"  # what the input is for: "filter" or "search"
        self._seen = -1
        self.shown: list[RawLine] = []

    def compose(self) -> ComposeResult:
        yield TailView()
        yield Input(placeholder=FILTER_HINT)

    def _matches(self, line: RawLine) -> bool:
        return self._filter.matches(line.text)

    def sync(self, raw: Sequence[RawLine], newest: int) -> None:
        """Show the newest matching lines (no work when nothing arrived; none while scrolled back:
        the lines read stay where they are until ``End``)."""
        if newest == self._seen or self.back:
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
        self.back = 0
        self._title()
        self.sync(raw, newest)

    # -- scroll-back and search ---------------------------------------------------------------
    def scroll(self, raw: Sequence[RawLine], newest: int, step: int) -> None:
        """``step`` lines further back (> 0) or forward (< 0) in the kept lines; back at the
        newest, the tail follows again."""
        if not self.back:
            self._kept = [r for r in raw if self._matches(r)]
        height = max(1, self.query_one(TailView).size.height)
        self.back = max(0, min(len(self._kept) - height, self.back + step))
        if self.back:
            self._show_kept()
        else:
            self.rebuild(raw, newest)

    def find(self, raw: Sequence[RawLine], newest: int, step: int = 1) -> RawLine | None:
        """The next line containing the search text, older (``step`` 1) or newer (-1) than the
        one found last (from the newest at first); the view scrolls to show it."""
        if not self.search:
            return None
        view = self.query_one(TailView)
        if not self.back:
            self._kept = [r for r in raw if self._matches(r)]
        kept = self._kept
        pos = next((i for i, r in enumerate(kept) if r.seq == view.hit), len(kept) if step > 0 else -1)
        order = range(pos - 1, -1, -1) if step > 0 else range(pos + 1, len(kept))
        found = next((i for i in order if self.search in kept[i].text.lower()), None)
        if found is None:
            return None
        self._show_line(found)
        return kept[found]

    def _show_line(self, found: int) -> None:
        """Kept line ``found`` highlighted in the middle of the view (or as far as the kept lines
        allow)."""
        view = self.query_one(TailView)
        view.hit = self._kept[found].seq
        height = max(1, view.size.height)
        self.back = max(0, min(len(self._kept) - height, len(self._kept) - 1 - found - height // 2))
        self._show_kept()

    def goto(self, raw: Sequence[RawLine], text: str) -> tuple[RawLine | None, str]:
        """``g``: the line ``text`` names (a line number or a time of day), shown and highlighted;
        (None, why) when the log tail does not have it."""
        from tui.widgets.log_goto import goto

        kept = [r for r in raw if self._matches(r)] if not self.back else self._kept
        found, words = goto(kept, text)
        if found is None:
            return None, words
        self._kept = kept
        self._show_line(found)
        return kept[found], words

    def _show_kept(self) -> None:
        view = self.query_one(TailView)
        end = len(self._kept) - self.back
        view.lines = self.shown = self._kept[:end]
        view.refresh()
        self._title()

    def set_wrap(self, on: bool) -> None:
        view = self.query_one(TailView)
        view.wrap = on
        view.refresh()

    def _title(self) -> None:
        """What is in force, on the tail's top line: the filter, the search, scrolled back."""
        parts = []
        if self.filter:
            parts.append(f"filter: {self._filter.describe()}")
        if self.search:
            parts.append(f"find: {self.search} (F3 older · F4 newer)")
        if self.back:
            parts.append(f"{self.back:,} lines back (End: follow)")
        self.border_title = Content(" · ".join(parts)) if parts else None  # outside text: never markup

    def open_filter(self) -> None:
        self._open("filter", self.filter, FILTER_HINT)

    def open_search(self) -> None:
        self._open("search", self.search, "find in the log tail (Enter: the newest line containing it)")

    def open_goto(self, value: str = "") -> None:
        """``value``: what the input starts with (the chart's window end, when it is panned)."""
        from tui.widgets.log_goto import HINT

        self._open("goto", value, HINT)

    def _open(self, mode: str, value: str, hint: str) -> None:
        self._mode = mode
        self.add_class("-filtering")
        inp = self.query_one(Input)
        inp.placeholder = hint
        inp.value = value
        inp.focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.remove_class("-filtering")
        if self._mode == "goto":
            self.post_message(self.GotoRequested(event.value.strip().lower()))
            return
        if self._mode == "search":
            text = event.value.strip().lower()
            self.search = text
            self.query_one(TailView).hit = None
            self.post_message(self.SearchChanged(text))
            return
        new, error = parse_filter(event.value)
        if new is None:  # the filter in force stays; the message says why
            self.post_message(self.FilterChanged(self.filter, "", error))
            return
        self._filter = new
        self.filter = new.text
        self.post_message(self.FilterChanged(self.filter, new.notice()))

    class GotoRequested(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class SearchChanged(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class FilterChanged(Message):
        def __init__(self, text: str, words: str = "", error: str = "") -> None:
            super().__init__()
            self.text = text  # as typed
            self.words = words  # the notification's words for it
            self.error = error  # why what was typed was refused ("" : it was taken)

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
        if self.back:
            self._show_kept()
