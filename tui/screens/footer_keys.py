"""Which keys the footer shows: those that matter in the screen's mode (a live view, a replay that
plays, a replay that has ended), most useful first, as many as fit the width whole. Keys left out
still work; the help (``?``) lists them all. Pure: the screen asks :func:`footer_actions` and
hides the rest (:meth:`tui.screens.compare_view.CompareScreen.active_bindings`)."""

from __future__ import annotations

from collections.abc import Iterable

LIVE, REPLAY, ENDED = "live", "replay", "ended"
PALETTE_W = 12  # "▏^p palette" at the right end of the footer

_VIEW = (
    "toggle_chart", "toggle_log", "filter", "find", "zoom", "add_mark",
    "chart_window(1)", "chart_window(-1)", "chart_pan(1)", "chart_pan(-1)", "toggle_wrap", "export", "pick_theme", "screenshot",
)  # fmt: skip
# "back": the way out of a pane opened from another screen (the fleet's Escape): first when there
ORDER: dict[str, tuple[str, ...]] = {
    LIVE: ("back", "pause", "segment(-1)", "segment(1)", "restart_mark", "help", "quit", *_VIEW),
    REPLAY: (
        "back",
        "pause",
        "faster",
        "slower",
        "segment(-1)",
        "segment(1)",
        "help",
        "quit",
        *_VIEW,
        "restart_mark",
    ),
    ENDED: ("back", "segment(-1)", "segment(1)", "help", "quit", *_VIEW),
}


def mode_of(statuses: Iterable[str], replay: bool) -> str:
    """The screen's mode from its panes' statuses: ended when every source has ended (or failed),
    a replay while a replay plays, live otherwise."""
    statuses = list(statuses)
    if statuses and all(s in ("ended", "error") for s in statuses):
        return ENDED
    return REPLAY if replay else LIVE


def footer_actions(mode: str, width: int, labels: dict[str, tuple[str, str]]) -> frozenset[str]:
    """The actions the footer shows in ``mode`` in ``width`` columns; ``labels``: action ->
    (key as shown, description) of the keys that the footer may show. Each key takes its cells
    whole (``key desc`` and two spaces) or is left out."""
    room = width - PALETTE_W - 1
    shown = []
    placed = set().union(*ORDER.values())
    extra = [a for a in labels if a not in placed]  # a key no mode names yet: last, in every mode
    for action in (*ORDER[mode], *extra):
        if action not in labels:
            continue
        key, desc = labels[action]
        need = len(key) + 1 + len(desc) + 2
        if need > room:
            break
        room -= need
        shown.append(action)
    return frozenset(shown)
