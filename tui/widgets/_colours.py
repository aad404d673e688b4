"""Theme colours as Rich colour texts / RGB tuples (for Rich Text and the chart's strips)."""

from __future__ import annotations

from textual.app import App
from textual.color import Color, ColorParseError


def theme_color(app: App, name: str, fallback: str = "#888888") -> Color:
    """The theme variable ``name`` as an opaque colour (alpha blended over the background)."""
    v = app.theme_variables
    try:
        bg = Color.parse(v.get("background", "#000000"))
    except ColorParseError:
        bg = Color(0, 0, 0)
    try:
        c = Color.parse(v.get(name, fallback))
    except ColorParseError:
        c = Color.parse(fallback)
    return bg + c if c.a < 1 else c


def hex_color(app: App, name: str, fallback: str = "#888888") -> str:
    return theme_color(app, name, fallback).hex6


def rgb(app: App, name: str, fallback: str = "#888888") -> tuple[int, int, int]:
    return theme_color(app, name, fallback).rgb
