"""The Textual app: themes, app-wide keys, the command palette (made from every key of
:mod:`tui.screens.keys`), and the watch screen."""

from __future__ import annotations

import gc
import signal
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual.app import App, SystemCommand
from textual.screen import Screen

from tui.core.model import stop
from tui.core.model.sanitize import visible
from tui.panes.launch import LaunchPlan
from tui.screens.keys import ALL_KEYS, APP_KEYS, TEXTUAL_DUPLICATES
from tui.screens.messages import ScreenshotSaved, WatchReady
from tui.screens.palette import KeysProvider
from tui.screens.watch import WatchScreen
from tui.theming.themes import DEFAULT_THEME, load_themes
from tui.theming.ui_config import load_ui_config, save_ui_config

HELD_TOASTS = 4  # notifications kept while the help is open, shown when it closes
INTRO_SECONDS = 5  # the demo's first notice: read, then out of the chart's way
STOP_GRACE = 5.0  # a stop signal during start-up ends the app by then even if the screen never mounted


class SpecwatchApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "specwatch"
    BINDINGS = [k.binding() for k in APP_KEYS]
    COMMANDS = {KeysProvider}  # Textual's system commands, found by our footer words too

    def __init__(
        self,
        plan: LaunchPlan,
        *,
        save_dir: Path | None = None,
        theme: str | None = None,
        remember_theme: bool = True,
    ) -> None:
        super().__init__()
        self.plan = plan
        self.save_dir = Path(save_dir) if save_dir is not None else Path.cwd()
        self.remember_theme = remember_theme
        self._held_toasts: list[tuple[str, dict[str, Any]]] = []  # see notify()
        self.our_themes: list[str] = []
        self.theme_errors: list[str] = []
        self._wanted_theme = theme
        self.stopped_by: int | None = None  # the stop signal that ended the app
        self._watch_ready = False  # the watch screen is mounted (WatchReady)

    def stop_signal(self, sig: int) -> None:
        """A stop signal (SIGINT, SIGTERM, SIGHUP; called in the event loop by
        :mod:`tui.cli.signals`, whatever the app is doing): leave as `q` does (out of the
        alternate screen, mouse reporting off); the command then says so in one line and exits
        with 128 + signal. During start-up, once the watch screen is mounted (an exit while it
        mounts leaves its handlers without their widgets), or after :data:`STOP_GRACE` seconds."""
        if self.stopped_by is None:
            self.stopped_by = sig
        if self._watch_ready:
            self._stop_now()
        elif self.is_running:
            self.set_timer(STOP_GRACE, self._stop_now)

    def on_watch_ready(self, _: WatchReady) -> None:
        self._watch_ready = True
        if self.stopped_by is not None:
            self._stop_now()

    def _stop_now(self) -> None:
        if self.stopped_by is not None:
            self.exit(128 + self.stopped_by)

    def on_mount(self) -> None:
        themes, self.theme_errors = load_themes()
        for th in themes:
            self.register_theme(th)
        self.our_themes = [th.name for th in themes]
        wanted = self._wanted_theme or load_ui_config().get("theme") or DEFAULT_THEME
        if wanted not in self.available_themes:
            if self._wanted_theme:
                self.notify(f"no theme {wanted!r}; using {DEFAULT_THEME}", severity="warning", markup=False)
            wanted = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        self.theme = wanted
        for err in self.theme_errors:
            self.notify(err, title="theme file skipped", severity="warning", timeout=8, markup=False)
        if self.plan.fleet is not None:
            from tui.screens.fleet import FleetScreen  # only the fleet command needs it

            self.push_screen(FleetScreen(self.plan.fleet))
        else:
            self.push_screen(WatchScreen(self.plan))
        # Everything built so far (Textual, the widgets, modules) lives as long as the app:
        # keep it out of the cyclic GC's full collections, which would otherwise walk it every
        # time and pause the UI for 100+ ms while a log streams in.
        self.call_after_refresh(gc.freeze)
        if self.plan.intro:
            self.notify(self.plan.intro, title="specwatch", timeout=INTRO_SECONDS, markup=False)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Every key's action (:data:`tui.screens.keys.ALL_KEYS`), then Textual's own commands
        but those that one of ours does already."""
        for key in ALL_KEYS:
            yield SystemCommand(key.title, key.palette_help, lambda action=key.target: self._palette(action))
        yield from (c for c in super().get_system_commands(screen) if c.title not in TEXTUAL_DUPLICATES)

    def _palette(self, action: str) -> None:
        target, _, name = action.partition(".")
        if target == "screen" and not isinstance(self.screen, WatchScreen):
            return
        self.call_later(self.run_action, name if target == "app" else action)

    # -- app-wide actions --------------------------------------------------------------------
    def action_help(self) -> None:
        from tui.screens.help import HelpScreen  # imported when first asked for: a faster first frame

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(), lambda _: self._release_toasts())

    def _release_toasts(self) -> None:
        """The notifications held while the help was open (the newest few, and how many more)."""
        held, self._held_toasts = self._held_toasts, []
        for message, kwargs in held[-HELD_TOASTS:]:
            self.notify(message, **kwargs)
        if len(held) > HELD_TOASTS:
            self.notify(f"{len(held) - HELD_TOASTS} more notifications while the help was open", timeout=3)

    def action_pick_theme(self) -> None:
        from tui.screens.theme_picker import ThemePicker  # imported when first asked for

        builtin = sorted(n for n in self.available_themes if n not in self.our_themes)

        def chosen(name: str | None) -> None:
            if name:
                self.set_theme(name)

        self.push_screen(ThemePicker(self.our_themes, builtin, self.theme), chosen)

    def set_theme(self, name: str) -> None:
        self.theme = name
        if self.remember_theme:
            try:
                path = save_ui_config(theme=name)
            except OSError as exc:
                self.notify(
                    f"theme {name} (not remembered: {exc.strerror or exc})", severity="warning", markup=False
                )
                return
            self.notify(f"theme {name} (remembered in {path})", timeout=3, markup=False)

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        """An SVG of the screen, named by the time, in ``save_dir`` (``filename`` and ``path``,
        when given, as Textual's own action takes them). The toasts on the screen are not in it:
        hidden for the frame the picture is taken from, then shown again."""
        name = (
            filename or f"specwatch-{time.strftime('%Y%m%d-%H%M%S')}-{int(time.time() * 1000) % 1000:03d}.svg"
        )
        where = Path(path) if path else self.save_dir
        racks = [r for r in self.screen.query("#textual-toastrack") if r.display]
        if not racks:
            self._save_screenshot(name, where)
            return
        for rack in racks:
            rack.display = False
        self.screen.refresh(layout=True)

        def take() -> None:
            try:
                self._save_screenshot(name, where)
            finally:
                for rack in racks:
                    rack.display = True

        self.call_after_refresh(take)

    def _save_screenshot(self, name: str, where: Path) -> None:
        try:
            where.mkdir(parents=True, exist_ok=True)
            saved = self.save_screenshot(filename=name, path=str(where))
        except OSError as exc:
            self.notify(
                f"cannot save a screenshot in {where}: {exc.strerror or exc}",
                severity="error",
                markup=False,
            )
            return
        self.post_message(ScreenshotSaved(saved))
        self.notify(saved, title="screenshot saved", timeout=6, markup=False)

    def notify(self, message: str, *, title: str = "", **kwargs: Any) -> None:
        """Every notification goes through here: messages and titles carry outside text (labels,
        paths, remote and error messages), so a control sequence in them is shown, never obeyed.
        While a screen that must not be covered (the help) is on top, they wait until it closes."""
        if getattr(self.screen, "HOLDS_TOASTS", False):
            self._held_toasts.append((message, {"title": title, **kwargs}))
            return
        super().notify(visible(message, keep_newlines=True), title=visible(title), **kwargs)

    async def action_quit(self) -> None:
        self.exit(0)

    def action_interrupt(self) -> None:
        """``ctrl+c`` (the terminal sends it as a key, not as SIGINT): what a SIGINT does, through
        the same exit path (:meth:`stop_signal`); the signal is noted for the command, which then
        says so in one line and exits with 130."""
        stop.request(signal.SIGINT)
        self.stop_signal(signal.SIGINT)

    def on_unmount(self) -> None:
        for fn in self.plan.cleanup:
            try:
                fn()
            except Exception:
                pass
