"""One list of keys (tui/screens/keys.py) makes the bindings, the command palette and the help
table: every binding is in the palette and in the help, once, and Textual's own commands that
ours do already are not listed next to them; the README's key table names every key."""

from __future__ import annotations

import re
from pathlib import Path

from _tui_util import _isolated_config, replay_app, wait_for  # noqa: F401
from textual.app import App
from textual.binding import Binding

from tui.screens.help import HELP, HelpScreen
from tui.screens.keys import ALL_KEYS, TEXTUAL_DUPLICATES
from tui.screens.watch import WatchScreen


def bindings(app) -> list[Binding]:
    return [*WatchScreen.BINDINGS, *type(app).BINDINGS]  # type: ignore[list-item]


def help_rows() -> dict[str, list[str]]:
    """The help table's rows: the key column -> the texts of its rows."""
    rows: dict[str, list[str]] = {}
    for key, text in re.findall(r"^\| `([^`]+)` \| (.+) \|$", HELP, re.M):
        rows.setdefault(key, []).append(text)
    return rows


async def test_every_binding_is_in_the_palette_and_the_help_once(tmp_path):
    app = replay_app("ab_a.log", save_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        await pilot.press("tab")  # a focused pane: Textual would offer its own "Maximize" now
        await pilot.pause()
        commands = list(app.get_system_commands(app.screen))
        titles = [c.title for c in commands]
        rows = help_rows()
        bound = bindings(app)
        assert len(bound) == len(ALL_KEYS) == len({(b.key, b.action) for b in bound})
        for b in bound:
            (key,) = [k for k in ALL_KEYS if (k.keys, k.action) == (b.key, b.action)]
            assert titles.count(key.title) == 1, key.title
            assert key.name in rows and len(rows[key.name]) == 1, key.name
            assert rows[key.name] == [key.does]
            help_line = next(c.help for c in commands if c.title == key.title)
            assert help_line.endswith(f"({key.name})")
        assert len(rows) == len(ALL_KEYS)
        assert len(titles) == len(set(titles))  # "Quit" is ours only
        textual_own = {c.title for c in App.get_system_commands(app, app.screen)}
        assert {"Maximize", "Screenshot", "Theme"} <= textual_own  # what would be offered twice
        assert not (TEXTUAL_DUPLICATES - {"Quit"}) & set(titles)
        assert "Keys" in titles  # Textual's key panel is not one of ours: it stays
        # Every binding runs through the palette: the help screen, from its title.
        next(c for c in commands if c.title == "Help").callback()
        await pilot.pause()
        await pilot.pause()
        await wait_for(
            pilot, lambda: isinstance(app.screen, HelpScreen), "isinstance(app.screen, HelpScreen)"
        )


def test_footer_labels_and_shown_keys_are_those_of_the_list():
    shown = [b.description for b in WatchScreen.BINDINGS if b.show]
    assert shown == [k.footer for k in ALL_KEYS if k.scope == "screen" and k.show]
    assert "Overlay" not in shown and "Pause" in shown


def test_readme_names_every_key():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| key | what it does |") :]
    table = table[: table.index("\n\n")]
    for key in ALL_KEYS:
        for part in key.name.split(" / "):
            assert f"`{part}`" in table, key.name
