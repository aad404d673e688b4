"""The comparison bar: B − A accept len with its 95% CI and a plain verdict, drawn on a scale
around zero, updated live. The numbers are :func:`tui.core.pipeline.whole.comparison`'s (the newest
measured segment of each source), so they match ``specwatch summary --json``."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Group
from rich.text import Text
from textual.content import Content
from textual.widgets import Static

from tui.core.model.sanitize import number, visible
from tui.panes.labels import fit_label
from tui.panes.pane_numbers import (
    estimator_words,
    insufficient_short,
    raw_vs_adjusted,
    verdict_forms,
    verdict_text,
)
from tui.widgets._colours import hex_color

NOTE_LABEL_W = 24  # cells of each label in the "A = … · B = …" note
VERDICT_COLOUR = {
    "higher": "success",
    "lower": "error",
    "no_difference": "foreground",
    "insufficient": "warning",
}


def ci_strip(lo: float, hi: float, diff: float, width: int) -> tuple[str, int, int, int, int]:
    """A one-line drawing of [lo, hi] and diff on a scale symmetric around 0; returns the text
    and the columns of zero, lo, hi and diff."""
    r = max(abs(lo), abs(hi), 1e-6) * 1.15

    def col(x: float) -> int:
        return max(0, min(width - 1, round((x + r) / (2 * r) * (width - 1))))

    z, a, b, d = col(0.0), col(lo), col(hi), col(diff)
    cells = ["─"] * width
    for i in range(a, b + 1):
        cells[i] = "━"
    cells[a], cells[b] = "┣", "┫"
    cells[d] = "●"
    cells[z] = "┼" if cells[z] in "─━" else cells[z]
    return "".join(cells), z, a, b, d


class CompareBar(Static):
    DEFAULT_CSS = """
    CompareBar {
        height: auto;
        min-height: 3;
        padding: 0 1;
        border: round $accent;
        border-title-color: $accent;
        border-title-style: bold;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", **kwargs)
        self.comparison: dict[str, Any] | None = None
        self.border_title = "B − A"
        self._rows = -1

    def show(self, c: dict[str, Any], a_label: str, b_label: str) -> None:
        a_label, b_label = visible(a_label), visible(b_label)  # outside text: shown, never obeyed
        self.comparison = c
        app = self.app
        al = c["accept_len"]
        width = max(20, (self.size.width or 64) - 4)
        peers = (a_label, b_label)
        half = max(8, (width - 12) // 2)  # each label in the title: the part that tells A from B
        title = f"B − A: {fit_label(b_label, half, peers)} vs {fit_label(a_label, half, peers)}"
        self.border_title = Content(title)  # labels: plain text, never markup
        colour = hex_color(app, VERDICT_COLOUR[al["verdict"]])
        muted = hex_color(app, "foreground-muted")
        rows: list[Text] = []
        heads = (f"accept len ({estimator_words(al)}) ", "accept len ")
        head = fitted_row(heads, verdict_forms(al), width, f"bold {colour}")
        notes = (  # whole or not at all: a number is never cut
            f"    A = {fit_label(a_label, NOTE_LABEL_W, peers)} (segment {c['a']['segment']}, n={al['n_a']}) · "
            f"B = {fit_label(b_label, NOTE_LABEL_W, peers)} (segment {c['b']['segment']}, n={al['n_b']})",
            f"    n: A {al['n_a']}, B {al['n_b']}",
        )
        for note in notes:
            if head.cell_len + len(note) <= width:
                head.append(note, style=muted)
                break
        rows.append(head)
        ci = al.get("ci95")
        if ci and al.get("diff") is not None and all(map(math.isfinite, (*ci, al["diff"]))):
            lo, hi = ci
            strip, z, a, b, d = ci_strip(lo, hi, al["diff"], width)
            line = Text(strip, style=muted, no_wrap=True)
            line.stylize(colour, a, b + 1)
            line.stylize(f"bold {colour}", d, d + 1)
            line.stylize(f"bold {hex_color(app, 'foreground')}", z, z + 1)
            rows.append(line)
            rows.append(Text(" " * z + "0", style=muted, no_wrap=True))
        else:
            rows.append(Text(f"means so far: A {_m(al['mean_a'])}, B {_m(al['mean_b'])}", style=muted))
        b_names = (b_label, "B") if b_label != "B" else ("B",)  # the whole label, else "B" as above
        rows += _load_rows(c, app, b_names, muted, width)
        rate = c.get("accept_rate")
        if rate:
            heads = (f"accept rate ({estimator_words(rate, 'accept_rate')}) ", "accept rate ")
            colour = hex_color(app, VERDICT_COLOUR[rate["verdict"]])
            rt = fitted_row(heads, verdict_forms(rate), width, colour)
            note = f"  [{rate['note']}]" if rate.get("note") else ""
            if note and rt.cell_len + len(note) <= width:
                rt.append(note, style=muted)
            rows.append(rt)
        # a layout pass of the screen only when the height must change
        lines = sum(1 if r.no_wrap else max(1, math.ceil(r.cell_len / width)) for r in rows)
        self.update(Group(*rows), layout=lines != self._rows or lines != self.size.height)
        self._rows = lines

    @property
    def text(self) -> str:
        c = self.comparison
        return "" if c is None else verdict_text(c["accept_len"])


def fitted_row(heads: tuple[str, ...], bodies: tuple[str, ...], width: int, style: str) -> Text:
    """A bold head and a verdict in ``width`` cells: the longest verdict form that fits beside a
    head (the longer head first); when none does, the shortest wrapped onto more rows, never cut."""
    for body in bodies:
        for head in heads:
            if len(head) + len(body) <= width:
                return _row(head, body, style, wrap=False)
    return _row(heads[-1], bodies[-1], style, wrap=True)


def _row(head: str, body: str, style: str, *, wrap: bool) -> Text:
    t = Text(head, style="bold", no_wrap=not wrap, overflow="fold")
    t.append(body, style=style)
    return t


def _load_rows(c: dict[str, Any], app: Any, b_names: tuple[str, ...], muted: str, width: int) -> list[Text]:
    """The load-adjusted verdict beside the raw one (and whether the load differs), and the
    generation throughput ratio (against a source labelled ``baseline``, else B / A). ``b_names``
    are B's label from the whole to the shortest: each verdict says the most of it that fits."""
    rows = []
    adj = c.get("accept_len_load_adjusted")
    if adj:
        colour = hex_color(app, VERDICT_COLOUR[adj["verdict"]])
        heads = ("  at equal batch size ", "  equal batch ")
        by_name = [verdict_forms(adj, name) for name in b_names]
        bodies = tuple(
            dict.fromkeys(f[i] for i in range(max(map(len, by_name))) for f in by_name if i < len(f))
        )
        t = fitted_row(heads, bodies, width, colour)
        note = (adj.get("load") or {}).get("note")
        if note and t.cell_len + len(note) + 4 <= width:
            t.append(f"  · {note}", style=muted)
        rows.append(t)
        # said, not left to contradict
        whys = [raw_vs_adjusted(c["accept_len"], adj, name) for name in b_names]
        why = next((w for w in whys if len(w) + 2 <= width), whys[-1])
        if why:
            rows.append(Text("  " + why, style=muted, no_wrap=False, overflow="fold"))
    tp = c.get("throughput")
    if tp and tp.get("ratio") is not None:
        what = "throughput vs baseline" if tp.get("baseline") else "throughput B / A"
        ci = tp.get("ci95")
        words = {"higher": "faster", "lower": "slower", "no_difference": "no significant difference"}
        ratio = f"{number(tp['ratio'])}×"
        if ci:
            verdict = words[tp["verdict"]]
            bodies = (f"{ratio} (95% CI {number(ci[0])} … {number(ci[1])}): {verdict}", f"{ratio}: {verdict}")
        else:
            reason = tp.get("reason") or "not enough data"
            bodies = (
                f"{ratio}, insufficient data ({reason})",
                f"{ratio}, insufficient: {insufficient_short(reason)}",
            )
        colour = hex_color(app, VERDICT_COLOUR[tp["verdict"]])
        rows.append(fitted_row((f"{what} ", "throughput "), bodies, width, colour))
    return rows


def _m(v: float | None) -> str:
    return number(v)
