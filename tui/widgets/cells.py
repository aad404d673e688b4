"""Outside text made to take exactly the cells it is counted for.

A row of a pane is cut and padded to its width by the cells Rich counts for each character; the
terminal then draws those characters by its own count. Where the two disagree, the row comes
out longer or shorter than counted and the pane's right border moves on that row. Random bytes
in a log (decoded with replacement) bring every kind of such character: a TAB (no cell for Rich,
up to eight for the terminal), combining marks and zero-width characters (joined to the cell
before them by one and not by the other: at a row's start, to the border), format characters,
unassigned and private-use code points, Hangul jamo, spacing marks that Rich counts as none.

:func:`exact_cells` keeps a character only when Rich's count is the width the Unicode tables give a
terminal (2 for East Asian Wide and Fullwidth, 1 otherwise; East Asian Ambiguous is 1, as in
every non-CJK locale and tmux's default), after composing what composes (NFC: ``e`` + U+0301 is
``é``); TAB becomes spaces to the next multiple of 8; every other character becomes U+FFFD,
the character undecodable bytes already show as (one cell).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from rich.cells import get_character_cell_size

REPLACEMENT = "\ufffd"
TAB = 8
# Categories a terminal draws in no cell of their own, or as it likes: marks that combine,
# controls and format characters, surrogates, private use, unassigned, line/paragraph separators.
_NO_CELL = frozenset({"Mn", "Me", "Mc", "Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def unicode_width(ch: str) -> int | None:
    """The cells a terminal following the Unicode tables gives ``ch`` (None: none of its own)."""
    if unicodedata.category(ch) in _NO_CELL:
        return None
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


@lru_cache(maxsize=4096)
def _kept(ch: str) -> bool:
    return unicode_width(ch) == get_character_cell_size(ch)


def exact_cells(text: str) -> str:
    """``text`` (already through :func:`tui.core.model.sanitize.visible`) with every character
    taking the cells Rich counts for it (see the module doc)."""
    if "\t" in text:
        text = text.expandtabs(TAB)
    if text.isascii():
        return text  # visible() left no control in it but TAB
    text = unicodedata.normalize("NFC", text)
    return "".join(ch if (ch < "\x7f" or _kept(ch)) else REPLACEMENT for ch in text)
