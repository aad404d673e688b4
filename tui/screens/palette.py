"""The command palette's search: every command by its title, and each of our keys by its footer
words too (the footer says ``s SVG``: typing ``svg`` finds "Save a screenshot"). Textual's own
provider matches titles only."""

from __future__ import annotations

from textual.command import Hit, Hits
from textual.content import Content
from textual.system_commands import SystemCommandsProvider

from tui.screens.keys import ALL_KEYS

FOOTER_WORDS = {k.title: k.footer for k in ALL_KEYS}


class KeysProvider(SystemCommandsProvider):
    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback, *_ in self.app.get_system_commands(self.screen):
            by_title = matcher.match(name)
            footer = FOOTER_WORDS.get(name, "")
            by_footer = matcher.match(footer) if footer and footer.lower() not in name.lower() else 0.0
            if by_title >= by_footer and by_title > 0:
                yield Hit(by_title, matcher.highlight(name), callback, help=help_text)
            elif by_footer > 0:  # shown with the footer's words, so that the hit says why it matched
                shown = Content(f"{name} · ") + matcher.highlight(footer)
                yield Hit(by_footer, shown, callback, text=name, help=help_text)
