"""Themes as data files: the shipped ones (:func:`tui.resources.themes`: the repository's ``themes/``,
packaged at build time) and ``~/.config/specwatch/themes/*.toml``
(the user's own), validated with pydantic and registered as Textual themes next to Textual's
built-ins. The chosen theme is remembered in the user's config dir (see :mod:`tui.theming.ui_config`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from importlib.resources.abc import Traversable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from textual.color import Color, ColorParseError
from textual.theme import Theme

from tui import resources
from tui.theming.ui_config import config_dir

DEFAULT_THEME = "specwatch-dark"


class ThemeFile(BaseModel):
    """One theme file. Colours are Textual colour texts: ``#rrggbb``, ``rgb(…)``, names."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    dark: bool = True
    primary: str
    secondary: str | None = None
    accent: str | None = None
    success: str | None = None
    warning: str | None = None
    error: str | None = None
    foreground: str | None = None
    background: str | None = None
    surface: str | None = None
    panel: str | None = None
    boost: str | None = None
    luminosity_spread: float = Field(default=0.15, ge=0.0, le=1.0)
    text_alpha: float = Field(default=0.95, ge=0.0, le=1.0)
    variables: dict[str, str] = {}

    @field_validator(
        "primary",
        "secondary",
        "accent",
        "success",
        "warning",
        "error",
        "foreground",
        "background",
        "surface",
        "panel",
        "boost",
    )
    @classmethod
    def _colour(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            Color.parse(value)
        except ColorParseError:
            raise ValueError(
                f"{value!r} is not a colour (use #rrggbb, rgb(r,g,b) or a colour name)"
            ) from None
        return value

    def to_textual(self) -> Theme:
        return Theme(
            name=self.name,
            primary=self.primary,
            secondary=self.secondary,
            accent=self.accent,
            success=self.success,
            warning=self.warning,
            error=self.error,
            foreground=self.foreground,
            background=self.background,
            surface=self.surface,
            panel=self.panel,
            boost=self.boost,
            dark=self.dark,
            luminosity_spread=self.luminosity_spread,
            text_alpha=self.text_alpha,
            variables=dict(self.variables),
        )


def theme_dirs() -> list[Traversable]:
    """Where theme files are looked for, the shipped ones first (a user file may override one)."""
    shipped = resources.themes()
    return ([shipped] if shipped is not None else []) + [config_dir() / "themes"]


def load_theme_file(path: Traversable) -> ThemeFile:
    """Reads one theme file; raises ValueError with a one-line message naming the file and key."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    try:
        return ThemeFile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors()
        )
        raise ValueError(f"{path}: {problems}") from None


def load_themes(dirs: Sequence[Traversable] | None = None) -> tuple[list[Theme], list[str]]:
    """All valid themes (by name; a later directory wins) and one message per invalid file."""
    found: dict[str, Theme] = {}
    errors: list[str] = []
    for d in theme_dirs() if dirs is None else dirs:
        if not d.is_dir():
            continue
        for path in resources.listing(d, ".toml"):
            try:
                tf = load_theme_file(path)
                found[tf.name] = tf.to_textual()
            except ValueError as exc:
                errors.append(str(exc))
    return list(found.values()), errors
