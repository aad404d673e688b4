"""``?``: what every key does (the table made from :data:`tui.screens.keys.ALL_KEYS`) and what the
numbers mean."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from tui.core.formats import families
from tui.core.stats.segments import SEGMENT_RULE
from tui.screens.keys import key_table

HELP_TEXT = """\
# specwatch

Live acceptance of speculative decoding (EAGLE-3, MTP, draft models) from {families}
logs. One pane per source; `specwatch compare A B` adds a **B − A** bar.

## Keys

{keys}

`ctrl+p` opens the command palette: every action above by name.

## The numbers

* **accept len**: tokens emitted per verify step per request (1.00 = no draft token accepted).
  *last* is the newest value, *window* the mean of the last 50, *segment* the mean of the
  segment shown with its 95% confidence interval (batch means: consecutive log lines are not
  independent) and *n*.
* **accept rate**: *printed* is the server's own number — SGLang changed its formula three times,
  the definition found is named. *normalised* is always accepted / proposed drafts =
  (accept len − 1) / D, comparable across versions and servers.
* A **segment** is a stretch of log between restarts (a startup line: args dump, version, ready
  line; or your `n`), with the config it ran. {segment_rule} The table shows each one; the line
  under it compares the last two (95% CI of the difference and a verdict).
* Sample size: with fewer than 30 values a mean is shown but not trusted (⚠).
* Status: connecting · live · idle for N s · waiting · reconnecting (attempt k) · error (…) ·
  ended; a replay shows its speed and progress.

Themes are TOML files: copy a shipped one (`themes/` in the repository, `tui/resources/themes/` in
an installed copy) to `~/.config/specwatch/themes/` and edit it.
"""
HELP = (
    HELP_TEXT.replace("{families}", families.displays(log_lines=True))
    .replace("{keys}", key_table())
    .replace("{segment_rule}", SEGMENT_RULE)
)


class HelpScreen(ModalScreen[None]):
    HOLDS_TOASTS = True  # notifications wait until it closes (SpecwatchApp.notify): none covers it
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
