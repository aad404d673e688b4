"""Every key of the app, in one list: the watch screen's and the app's ``BINDINGS``, the command
palette's entries and the help screen's key table are all made from it, so a key cannot be in one
and missing from another.

A :class:`Key` is one action: the Textual key names that run it, the action (on the watch screen or
on the app), its footer label and whether the footer shows it, its title in the command palette,
and what it does (the help table's text and the palette's help line).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from textual.binding import Binding

# Textual's own palette commands that one of ours does already (ours keeps the screen's state
# right: zoom redraws the pane at its new size, the screenshot goes where -o/--save-dir says).
TEXTUAL_DUPLICATES = frozenset({"Quit", "Theme", "Maximize", "Minimize", "Screenshot"})


@dataclass(frozen=True)
class Key:
    keys: str  # Textual key names, comma-separated ("plus,equals_sign")
    action: str  # the action with its arguments ("segment(-1)")
    footer: str  # the footer's label (Binding.description)
    title: str  # the command palette's title
    does: str  # what it does: the help table's text, and the palette's help line
    show: bool = True  # shown in the footer
    display: str | None = None  # the key as the footer shows it (Binding.key_display)
    named: str | None = None  # the key(s) as help and palette name them (default: display, or keys)
    scope: Literal["screen", "app"] = "screen"
    priority: bool = False  # before any widget's own binding of the key (an input's ctrl+c)

    def binding(self) -> Binding:
        return Binding(
            self.keys,
            self.action,
            self.footer,
            show=self.show,
            key_display=self.display,
            priority=self.priority,
        )

    @property
    def name(self) -> str:
        """The key(s) as a person types them: ``+``, ``z / Enter``, ``shift+F3``."""
        return self.named or self.display or self.keys

    @property
    def target(self) -> str:
        """The action as the palette runs it: ``screen.pause``, ``app.help``."""
        return f"{self.scope}.{self.action}"

    @property
    def palette_help(self) -> str:
        return f"{self.does} ({self.name})"


WATCH_KEYS = [
    Key(
        "space", "pause", "Pause", "Pause / resume",
        "pause — a replay pauses its clock; a live view freezes (sources are still read)",
    ),
    Key(
        "plus,equals_sign", "faster", "Faster", "Replay faster",
        "replay speed one step up (… 20×, 50×, … as fast as possible)", display="+",
    ),
    Key("minus", "slower", "Slower", "Replay slower", "replay speed one step down", display="-"),
    Key(
        "left_square_bracket", "segment(-1)", "Prev seg", "Previous segment",
        "previous segment — a replay jumps there; a live pane shows that segment's numbers", display="[",
    ),
    Key(
        "right_square_bracket", "segment(1)", "Next seg", "Next segment",
        "next segment — a replay jumps there; a live pane shows that segment's numbers "
        "(past the newest it follows again)", display="]",
    ),
    Key(
        "n", "restart_mark", "Restarted", "I restarted the server now",
        "start a new segment in the focused pane now",
    ),
    Key(
        "m", "add_mark", "Mark", "Add a mark",
        "drop a numbered mark (M1, M2, …) on every chart and log tail",
    ),
    Key("c", "toggle_chart", "Chart", "Toggle charts", "show / hide the history charts"),
    Key(
        "less_than_sign", "chart_window(1)", "Wider", "Chart: wider window",
        "the charts' time window one step wider: last minute, 5 min, 15 min, hour, the default "
        "(last 1,500 records), everything kept (by the log's own clock; a log without timestamps "
        "gets record counts)", display="<",
    ),
    Key(
        "greater_than_sign", "chart_window(-1)", "Narrower", "Chart: narrower window",
        "the charts' time window one step narrower, down to the last minute", display=">",
    ),
    Key(
        "left_curly_bracket,shift+left", "chart_pan(1)", "Earlier", "Chart: pan back in time",
        "pan the charts' window back in time by half its width (shift+← too; it stays there while new "
        "lines come, the x axis says where it is; g then goes to its newest line in the log tail)",
        display="{",
    ),
    Key(
        "right_curly_bracket,shift+right", "chart_pan(-1)", "Later", "Chart: pan forward in time",
        "pan the charts' window forward by half its width (shift+→ too); past the newest it follows again",
        display="}",
    ),
    Key(
        "o", "toggle_overlay", "Overlay", "Toggle overlay chart",
        "show / hide the overlay chart: both series on one axis (compare)", show=False,
    ),
    Key("l", "toggle_log", "Log", "Toggle log tail", "show / hide the raw log tails"),
    Key(
        "slash", "filter", "Filter", "Filter the log tail",
        "filter the focused pane's log tail: only lines containing a text, or matching a regular "
        "expression typed after re: (shown on the tail while on; Enter applies, Esc closes)",
        display="/",
    ),
    Key(
        "ctrl+f", "find", "Find", "Find in the log tail",
        "find in the focused pane's log tail: the newest line containing the text, highlighted",
    ),
    Key(
        "w", "toggle_wrap", "Wrap", "Wrap log lines",
        "wrap long log lines (up to 6 rows each) or cut them at the width",
    ),
    Key(
        "f3", "find_next(1)", "Older hit", "Find: older line", "the next older line with the text found",
        show=False, named="F3",
    ),
    Key(
        # xterm, tmux and the Linux console send shift+F3 as ESC[1;2R / ESC[28~, which Textual 8
        # reads as a cursor-position report / ctrl+\ (never a key): F4 is the key they all send
        "f4,shift+f3", "find_next(-1)", "Newer hit", "Find: newer line",
        "the next newer line with the text found (shift+F3 too, where the terminal sends it)",
        show=False, named="F4",
    ),
    Key(
        "g", "goto", "Go to", "Go to a line or a time",
        "go to a line number or a time (HH:MM[:SS], by the log's clock) in the focused pane's log tail",
        show=False,
    ),
    Key(
        "pageup", "scroll_log(1)", "Log back", "Log tail: a page back",
        "scroll the focused pane's log tail a page back (the last 10,000 lines are kept)",
        show=False, named="PgUp",
    ),
    Key(
        "pagedown", "scroll_log(-1)", "Log forward", "Log tail: a page forward",
        "scroll the focused pane's log tail a page forward", show=False, named="PgDn",
    ),
    Key(
        "end", "scroll_log(0)", "Log: follow", "Log tail: follow", "back to the newest lines",
        show=False, named="End",
    ),
    Key(
        "e", "export", "CSV", "Export records as CSV",
        "export the records shown (the newest of each pane) as CSV",
    ),
    Key(
        "z,enter", "zoom", "Zoom", "Maximise / restore the pane",
        "maximise the focused pane (every block, the chart with room for its axis) · again: every pane",
        display="z", named="z / Enter",
    ),
    Key("tab", "focus_pane(1)", "Next pane", "Next pane", "focus the next pane", show=False),
    Key("shift+tab", "focus_pane(-1)", "Prev pane", "Previous pane", "focus the previous pane", show=False),
]  # fmt: skip

APP_KEYS = [
    Key("q", "quit", "Quit", "Quit", "leave specwatch", scope="app"),
    Key(
        "ctrl+c", "interrupt", "Interrupt", "Interrupt (quit)",
        "leave specwatch as an interrupt does: one line, exit status 130", show=False, scope="app",
        priority=True,
    ),
    Key(
        "question_mark", "help", "Help", "Help", "this help: keys and what the numbers mean",
        display="?", scope="app",
    ),
    Key("t", "pick_theme", "Theme", "Pick a theme", "pick a theme (previewed; remembered)", scope="app"),
    Key(
        "s", "screenshot", "SVG", "Save a screenshot", "save an SVG screenshot (the path is shown)",
        scope="app",
    ),
]  # fmt: skip

ALL_KEYS = WATCH_KEYS + APP_KEYS


def key_table() -> str:
    """The help screen's key table (Markdown), one row per key of :data:`ALL_KEYS`."""
    rows = [f"| `{k.name}` | {k.does} |" for k in ALL_KEYS]
    return "\n".join(["| key | what it does |", "|---|---|", *rows])
