"""Textual's footer, recomposed only when the keys it shows change.

Textual's :class:`~textual.widgets.Footer` removes and mounts all its key widgets again at every
``bindings_updated`` signal of its screen: every focus change, every ``refresh_bindings()`` (a
pane's status moving from connecting to live, a resize). Each new key widget is styled on mount, so
a screen opening with twenty keys in its footer restyled a hundred widgets before its data showed
(the fleet's Enter: five recomposes of the same keys). This footer keeps what it last showed
(key, its display, description, action, enabled, tooltip) and skips a recompose that would show
the same thing.
"""

from __future__ import annotations

from textual.widgets import Footer


class KeysFooter(Footer):
    """A :class:`~textual.widgets.Footer` that recomposes only when its keys change."""

    _shown: tuple | None = None

    def keys_shown(self) -> tuple:
        """What :meth:`compose` would show now (the bindings with ``show``, in order)."""
        if not self._bindings_ready:
            return ()
        app = self.app
        return (
            self.compact,
            self.show_command_palette,
            tuple(
                (b.key, app.get_key_display(b), b.description, b.action, enabled, tooltip, b.show)
                for key, (_node, b, enabled, tooltip) in self.screen.active_bindings.items()
                if b.show or key == app.COMMAND_PALETTE_BINDING
            ),
        )

    async def recompose(self) -> None:
        if not self.is_attached:
            return
        shown = self.keys_shown()
        if shown == self._shown:
            return  # the same keys: nothing to mount again
        self._shown = shown
        await super().recompose()
