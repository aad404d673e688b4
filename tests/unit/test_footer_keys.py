"""The footer's keys per mode (tui.screens.footer_keys): no replay keys in a live view, no speed
in an ended replay, and only whole keys that fit the width."""

from __future__ import annotations

from tui.screens.footer_keys import ENDED, LIVE, ORDER, PALETTE_W, REPLAY, footer_actions, mode_of
from tui.screens.keys import ALL_KEYS

LABELS = {k.action: (k.display or k.keys, k.footer) for k in ALL_KEYS if k.show}


def test_every_footer_key_has_a_place_in_some_mode():
    placed = set().union(*ORDER.values())
    assert set(LABELS) <= placed, set(LABELS) - placed


def test_modes():
    assert mode_of(["live", "idle"], replay=False) == LIVE
    assert mode_of(["live", "ended"], replay=True) == REPLAY
    assert mode_of(["ended", "error"], replay=True) == ENDED
    assert mode_of(["ended", "ended"], replay=False) == ENDED


def test_live_shows_no_replay_keys_and_ended_no_playing_keys():
    live = footer_actions(LIVE, 400, LABELS)
    assert "faster" not in live and "slower" not in live and "pause" in live and "help" in live
    ended = footer_actions(ENDED, 400, LABELS)
    assert not {"pause", "faster", "slower", "restart_mark"} & ended and "segment(-1)" in ended
    assert {"faster", "slower"} <= footer_actions(REPLAY, 400, LABELS)


def test_only_whole_keys_that_fit():
    for width in (60, 80, 100, 160):
        for mode in (LIVE, REPLAY, ENDED):
            shown = footer_actions(mode, width, LABELS)
            used = sum(len(LABELS[a][0]) + 1 + len(LABELS[a][1]) + 2 for a in shown)
            assert used <= width - PALETTE_W - 1
            first = [a for a in ORDER[mode] if a in LABELS][: len(shown)]
            assert set(first) == shown  # the most useful first


def test_a_key_no_mode_names_comes_last_in_every_mode():
    labels = {**LABELS, "goto": ("g", "Go to")}
    for mode in (LIVE, REPLAY, ENDED):
        assert "goto" in footer_actions(mode, 1000, labels)
        assert "goto" not in footer_actions(mode, 100, labels)  # after the others: no room left
