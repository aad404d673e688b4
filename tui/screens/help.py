"""``?``: what every key does and what the numbers mean."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# specwatch

Live acceptance of speculative decoding (EAGLE-3, MTP, draft models) from SGLang, vLLM and
llama.cpp logs. One pane per source; `specwatch compare A B` adds a **B − A** bar.

## Keys

| key | what it does |
|---|---|
| `space` | pause — a replay pauses its clock; a live view freezes (sources are still read) |
| `+` / `-` | replay speed up / down (… 20×, 50×, … as fast as possible) |
| `[` / `]` | previous / next segment — a replay jumps there; a live pane shows that segment's numbers (`]` past the newest follows again) |
| `n` | "I restarted the server now": start a new segment in the focused pane |
| `m` | drop a mark (M1, M2, …) on every chart and log tail |
| `c` | show / hide the history charts |
| `<` / `>` | the charts' time window one step wider / narrower: last minute, 5 min, 15 min, hour, the default (last 1,500 records), everything kept (by the log's own clock; a log without timestamps gets record counts) |
| `z` / `Enter` | maximise the focused pane (every block, the chart with room for its axis) · again: every pane |
| `o` | show / hide the overlay chart (compare) |
| `l` | show / hide the raw log tails |
| `/` | filter the focused pane's log tail (Enter applies, Esc closes) |
| `ctrl+f` | find in the focused pane's log tail: the newest line containing the text, highlighted · `F3` the next older one · `shift+F3` the next newer one |
| `PgUp` / `PgDn` / `End` | scroll the focused pane's log tail back / forward (the last 10,000 lines are kept) · follow the newest again |
| `w` | wrap long log lines (up to 6 rows each) or cut them at the width |
| `e` | export the records shown (the newest of each pane) as CSV |
| `s` | save an SVG screenshot (the path is shown) |
| `t` | pick a theme (remembered) |
| `tab` | next pane |
| `ctrl+p` | command palette: every action by name |
| `?` | this help · `q` quit |

## The numbers

* **accept len**: tokens emitted per verify step per request (1.00 = no draft token accepted).
  *last* is the newest value, *window* the mean of the last 50, *segment* the mean of the
  segment shown with its 95% confidence interval (batch means: consecutive log lines are not
  independent) and *n*.
* **accept rate**: *printed* is the server's own number — SGLang changed its formula three times,
  the definition found is named. *normalised* is always accepted / proposed drafts =
  (accept len − 1) / D, comparable across versions and servers.
* A **segment** is a stretch of log between restarts (a startup line, a truncation or
  rotation, a newer file, or your `n`), with the config it ran. The table shows each one; the
  line under it compares the last two (95% CI of the difference and a verdict).
* Sample size: with fewer than 30 values a mean is shown but not trusted (⚠).
* Status: connecting · live · idle for N s · waiting · reconnecting (attempt k) · error (…) ·
  ended; a replay shows its speed and progress.

Themes are TOML files: copy one from `themes/` to `~/.config/specwatch/themes/` and edit it.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen > VerticalScroll {
        width: 100;
        max-width: 95%;
        height: 90%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(HELP)

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
