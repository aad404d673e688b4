"""Fitting ``specwatch summary``'s text to the terminal: tables drop their least important columns
first, then elide text (never a number) in the middle; long lines wrap at spaces."""

from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap
from collections.abc import Sequence

DEFAULT_WIDTH = 100  # a terminal whose size cannot be read
MIN_WIDTH = 40
UNLIMITED = 10**6


def terminal_width() -> int:
    """``$COLUMNS`` when set; else the terminal's width when stdout is one; else no limit (a pipe
    or a file keeps whole lines, for grep and scripts)."""
    cols = os.environ.get("COLUMNS", "")
    if cols.strip().isdigit() and int(cols) > 0:
        return max(MIN_WIDTH, int(cols))
    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        return UNLIMITED
    return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def elide_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, its middle replaced by ``…``."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head = (width - 1) // 2 + (width - 1) % 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


def table(
    rows: Sequence[Sequence[str]],
    header: Sequence[str],
    width: int,
    drop: Sequence[int] = (),
    elide: int | None = None,
    min_elided: int = 12,
) -> tuple[list[str], list[int]]:
    """A plain table indented by two spaces (and the columns it kept), at most ``width`` wide when it can be: the columns
    in ``drop`` go first (in that order), then column ``elide`` (text, never numbers) is shortened
    in the middle down to ``min_elided`` characters. What still does not fit is left whole (the
    caller's :func:`fit` wraps it at spaces)."""
    keep = list(range(len(header)))

    def widths(cells: dict[int, int] | None = None) -> dict[int, int]:
        w = {i: max(len(str(r[i])) for r in [*rows, header]) for i in keep}
        if cells:
            w.update(cells)
        return w

    def total(w: dict[int, int]) -> int:
        return 2 + sum(w.values()) + 2 * (len(w) - 1)

    w = widths()
    for i in drop:
        if total(w) <= width:
            break
        keep.remove(i)
        w = widths()
    over = total(w) - width
    if over > 0 and elide is not None and elide in keep:
        w[elide] = max(min_elided, len(header[elide]), w[elide] - over)

    def line(cells: Sequence[str]) -> str:
        parts = [elide_middle(str(cells[i]), w[i]).ljust(w[i]) for i in keep]
        return ("  " + "  ".join(parts)).rstrip()

    head = [line(header), line(["-" * w.get(i, 0) for i in range(len(header))])]
    return head + [line(r) for r in rows], keep


def fit(lines: Sequence[str], width: int) -> list[str]:
    """Each line longer than ``width`` wrapped at spaces, continuation lines indented under it.
    Words are not broken unless a single one is wider than the whole line (a path, never a
    number)."""
    out: list[str] = []
    for ln in lines:
        if len(ln) <= width:
            out.append(ln)
            continue
        indent = ln[: len(ln) - len(ln.lstrip(" "))]
        more = indent + "    " if len(indent) + 4 < width // 2 else indent
        glued = GLUE.sub(lambda m: m.group(0).replace(" ", NBSP), ln.strip(" "))  # "0.156 ± 0.033" whole
        wrapped = textwrap.wrap(
            glued,
            width,
            initial_indent=indent,
            subsequent_indent=more,
            break_long_words=True,
            break_on_hyphens=False,
        ) or [""]
        out += [w.replace(NBSP, " ") for w in wrapped]
    return out


NBSP = "\u00a0"  # not a place to wrap for textwrap (its whitespace is ASCII only)
# a value and its interval, a parenthesis or bracket ("0.156 ± 0.033", "(n=765, ~13 independent)")
# and a word with its number ("weighted 1.89"), each kept on one line
GLUE = re.compile(r"\S+ ± \S+|\([^()]{1,40}\)|\[[^\[\]]{1,40}\]|[A-Za-z]+ [-+]?\d[\d.,]*")
