"""Themes are data files, validated, registered; the choice is remembered in the XDG dir."""

from __future__ import annotations

from pathlib import Path

import pytest
from _tui_util import _isolated_config, replay_app, wait_for  # noqa: F401

from tui.theming.themes import load_theme_file, load_themes, theme_dirs
from tui.theming.ui_config import config_dir, load_ui_config, save_ui_config

ROOT = Path(__file__).parent.resolve().parent.parent


def test_shipped_themes_load():
    themes, errors = load_themes([ROOT / "themes"])
    names = {t.name for t in themes}
    assert {"specwatch-dark", "specwatch-light", "specwatch-high-contrast"} <= names
    assert not errors
    assert {t.name: t.dark for t in themes}["specwatch-light"] is False


def test_bad_theme_files_are_named_with_the_key(tmp_path):
    (tmp_path / "bad.toml").write_text('name = "x"\nprimary = "not-a-colour"\n')
    (tmp_path / "typo.toml").write_text('name = "y"\nprimary = "#fff"\nprimry = "#000"\n')
    (tmp_path / "broken.toml").write_text("name = \n")
    themes, errors = load_themes([tmp_path])
    assert themes == []
    text = "\n".join(errors)
    assert "bad.toml: primary: 'not-a-colour' is not a colour" in text
    assert "typo.toml: primry" in text
    assert "broken.toml: not valid TOML" in text
    with pytest.raises(ValueError):
        load_theme_file(tmp_path / "bad.toml")


def test_user_themes_dir_is_searched_and_wins(tmp_path):
    user = config_dir() / "themes"
    user.mkdir(parents=True)
    (user / "mine.toml").write_text('name = "specwatch-dark"\nprimary = "#ff0000"\n')
    assert theme_dirs()[-1] == user
    themes, _ = load_themes()
    assert {t.name: t.primary for t in themes}["specwatch-dark"] == "#ff0000"


def test_ui_config_round_trip():
    assert load_ui_config() == {}
    path = save_ui_config(theme="specwatch-light")
    assert path.parent == config_dir() and load_ui_config() == {"theme": "specwatch-light"}
    path.write_text("not json")
    assert load_ui_config() == {}


async def test_invalid_theme_file_is_a_notification_not_a_crash():
    user = config_dir() / "themes"
    user.mkdir(parents=True)
    (user / "bad.toml").write_text('name = "bad"\n')
    app = replay_app("ab_a.log")
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        await wait_for(
            pilot,
            lambda: any("bad.toml" in n.message for n in app._notifications),
            "any(('bad.toml' in n.message for n in app._notifications))",
        )
        assert app.theme == "specwatch-dark"
