"""A segment's config in one line of a given width (a compare pane too short for the numbers'
config row): what tells two runs apart is kept longest."""

from __future__ import annotations

from tui.widgets.chart_axis import cut


def config_line(prefix: str, label: str, width: int) -> str:
    """``prefix`` and a config ``label`` in ``width`` characters: the prefix dropped first, then
    the word ``draft=``, then the draft model's name shortened from its start
    (``draft=…3.1-8b-fixed``: its end tells runs apart), then the end cut with ``…``."""
    for text in (prefix + label, label, label.replace(" draft=", " ")):
        if len(text) <= width:
            return text
    head, sep, draft = label.partition("draft=")
    if sep:
        rest = width - len(head) - len(sep) - 1
        if rest >= 6:
            return f"{head}{sep}…{draft[-rest:]}"
        if len(head) + 1 <= width:  # no room for the draft's name: the rest, whole, and that there is more
            return head + "…"
    return cut(label, width)
