"""``t``: pick a theme. Moving through the list previews it; Enter keeps it (and remembers it),
Escape goes back to the theme you had."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option


class ThemePicker(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    ThemePicker {
        align: center middle;
    }
    ThemePicker > Vertical {
        width: 48;
        height: 24;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    ThemePicker OptionList {
        height: 1fr;
    }
    """

    def __init__(self, ours: list[str], builtin: list[str], current: str) -> None:
        super().__init__()
        self.ours, self.builtin, self.original = ours, builtin, current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Theme — Enter keeps it, Esc cancels")
            options = [Option(f"{n}  (specwatch)", id=n) for n in self.ours]
            options += [Option(n, id=n) for n in self.builtin]
            yield OptionList(*options)

    def on_mount(self) -> None:
        ol = self.query_one(OptionList)
        names = self.ours + self.builtin
        if self.original in names:
            ol.highlighted = names.index(self.original)
        ol.focus()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id:
            self.app.theme = event.option.id

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.app.theme = self.original
        self.dismiss(None)
