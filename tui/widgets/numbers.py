"""The numbers block of a pane: accept len, accept rate (printed and normalised), throughput,
running requests, the segment shown, and a warning when the sample is too small.

A pane in the compact tier (a grid of many sources, see :mod:`tui.widgets.layout`) gets the
short form: the segment mean ± CI with its n first, then what fits of the rest; a number that
does not fit is dropped whole, never cut."""

from __future__ import annotations

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from tui.core.model.sanitize import visible
from tui.panes.pane_numbers import (
    DASH,
    PaneNumbers,
    PooledFigure,
    mean_ci_text,
    number_or_dash,
    short,
    warning_forms,
)
from tui.widgets._colours import hex_color
from tui.widgets.strip_lines import StripLines


class NumbersPanel(StripLines):
    DEFAULT_CSS = """
    NumbersPanel {
        height: auto;
        padding: 0 1;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.values: PaneNumbers | None = None
        self._shown: tuple | None = None
        self._pinned = False

    def show(self, v: PaneNumbers, *, pinned: bool = False) -> None:
        compact = self.has_class("-compact")
        key = (repr(v), pinned, compact, self.size.width, self.app.theme)
        if key == self._shown:  # the same numbers: nothing to draw
            return
        self._shown = key
        self.values, self._pinned = v, pinned
        if compact or v.brief:  # (brief numbers in a panel just grown: the short form until the next)
            self.set_content(self.compact_text(v, self.size.width or 40))
            return
        app = self.app
        strong, muted = hex_color(app, "primary"), hex_color(app, "foreground-muted")
        warn = hex_color(app, "warning")
        al, ar, tp, run = v.accept_len, v.accept_rate, v.throughput, v.running
        t = Table.grid(padding=(0, 2), expand=True)
        t.add_column(style="bold", no_wrap=True, min_width=11)
        t.add_column(ratio=1)

        room = max(12, (self.size.width or 80) - 13)  # the value column: the panel less the key column

        def kv(*pairs: tuple[str, str, str | None]) -> Text:
            """Pairs on a line, a pair that does not fit on the next line: a pair (``0.156 ±
            0.033``) is never split between two lines (only one longer than a line folds)."""
            out = Text(overflow="fold")
            col = 0
            for i, (key, value, style) in enumerate(pairs):
                pair_w = cell_len(key + " " if key else "") + cell_len(value)
                if i:
                    gap = "   " if key else "  "
                    if col + len(gap) + pair_w > room:
                        out.append("\n")
                        col = 0
                    else:
                        out.append(gap)
                        col += len(gap)
                if key:
                    out.append(key + " ", style=muted)
                out.append(value, style=style or "")
                col += pair_w
            return out

        seg_text = mean_ci_text(al.mean, al.hw, al.n)
        pairs = [
            ("last", number_or_dash(al.last), None),
            ("window", number_or_dash(al.window), None),
            ("segment", seg_text, f"bold {strong}"),
        ]
        if v.segments > 1:
            pairs.append(("all", f"{number_or_dash(al.total_mean)} (n={al.total_n})", None))
        t.add_row("accept len", kv(*pairs))
        if al.pooled is not None and al.pooled.value is not None:
            t.add_row("", kv(*pooled_pairs(al.pooled, strong, muted, "verdicts use this")))
        if ar.printed_n:
            rate = kv(
                (
                    "printed",
                    mean_ci_text(ar.printed_mean, ar.printed_hw, ar.printed_n, 3).rsplit(" (n=", 1)[0],
                    None,
                ),
                ("", ar.definition_words or "", muted),
            )
        else:
            rate = kv(("printed", DASH, None))
        if ar.pooled is not None and ar.pooled.value is not None:  # counts, no accept len: the rate
            rate.append("\n")
            rate.append_text(kv(*pooled_pairs(ar.pooled, strong, muted, "accept len not determined")))
        if ar.normalised_mean is not None:
            rate.append("\n")
            rate.append_text(
                kv(
                    (
                        "normalised",
                        mean_ci_text(ar.normalised_mean, ar.normalised_hw, al.n, 3).rsplit(" (n=", 1)[0],
                        None,
                    ),
                    ("", f"(AL−1)/{ar.drafts_per_step} = accepted/proposed drafts", muted),
                )
            )
        t.add_row("accept rate", rate)
        t.add_row(
            "throughput",
            kv(
                ("last", f"{number_or_dash(tp.last, 1)} tok/s", None),
                ("window", number_or_dash(tp.window, 1), None),
                ("mean", number_or_dash(tp.mean, 1), None),
            ),
        )
        t.add_row(
            "running req",
            kv(
                ("last", DASH if run.last is None else f"{run.last:.0f}", None),
                ("window", number_or_dash(run.window, 1), None),
            ),
        )
        for q in v.more:  # the quantities registered beyond the built-in ones (a family's own)
            t.add_row(
                q.label,
                kv(
                    ("last", f"{number_or_dash(q.last, q.digits)} {q.unit}".rstrip(), None),
                    ("segment", mean_ci_text(q.mean, q.hw, q.n, q.digits), None),
                ),
            )
        where = f"{v.segment}" + (" (pinned: ] to follow)" if pinned and not v.current else "")
        seg_line = kv(("", f"{where} of {v.segments}", "bold"), ("opened by", v.reason, None))
        seg_line.append("   ")
        seg_line.append(short(visible(v.config), 60), style=muted)
        t.add_row("segment", seg_line)
        if v.warning:
            t.add_row(Text("⚠ sample", style=f"bold {warn}"), Text(v.warning, style=warn))
        self.set_content(t)  # laid out once; only the rows whose numbers changed are drawn again

    def compact_text(self, v: PaneNumbers, width: int) -> Text:
        """The short form: lines of pieces, each piece kept whole or dropped."""
        app = self.app
        strong, muted = hex_color(app, "primary"), hex_color(app, "foreground-muted")
        al, ar, tp = v.accept_len, v.accept_rate, v.throughput
        rate = (
            mean_ci_text(ar.printed_mean, ar.printed_hw, ar.printed_n, 3).rsplit(" (n=", 1)[0]
            if ar.printed_n
            else DASH
        )
        lines: list[list[tuple[str, str]]] = [
            [
                ("accept len ", "bold"),
                (mean_ci_text(al.mean, al.hw, al.n), f"bold {strong}"),
                *pooled_piece(al.pooled, strong),
                (f"  last {number_or_dash(al.last)}", muted),
            ],
            [
                ("rate ", "bold"),
                (rate, ""),
                *pooled_piece(ar.pooled, strong),
                (f"  {number_or_dash(tp.last, 1)} tok/s", muted),
                (f"  seg {v.segment}/{v.segments}", muted),
            ],
        ]
        out = Text(no_wrap=True, overflow="crop")
        for i, pieces in enumerate(lines):
            if i:
                out.append("\n")
            used = 0
            for text, style in pieces:
                if used + len(text) > width:
                    break
                out.append(text, style=style)
                used += len(text)
        if v.warning:
            out.append("\n")
            forms = [f"⚠ {w}" for w in warning_forms(v.warning)]
            fits = [w for w in forms if len(w) <= width]
            out.append(fits[0] if fits else short(forms[-1], max(4, width)), style=hex_color(app, "warning"))
        return out

    def on_resize(self) -> None:
        if self.values is not None:
            self._shown = None
            self.show(self.values, pinned=self._pinned)


def pooled_pairs(p: PooledFigure, strong: str, muted: str, note: str) -> list[tuple[str, str, str | None]]:
    """A pooled value's pairs: ``pooled 1+Σaccepted/Σdrafts 2.61 [2.58, 2.64]  (9000 drafts; …)``."""
    digits = 2 if p.quantity == "accept_len" else 3
    ends = f" [{p.ci95[0]:.{digits}f}, {p.ci95[1]:.{digits}f}]" if p.ci95 else ""
    return [
        (f"pooled {p.formula}", f"{p.value:.{digits}f}{ends}", f"bold {strong}"),
        (
            "",
            f"({p.denominator:.0f} {p.denominator_words}"
            + (" from the printed means: the draft length varies" if p.from_means else "")
            + f"; {note})",
            muted,
        ),
    ]


def pooled_piece(pooled: PooledFigure | None, style: str) -> list[tuple[str, str]]:
    """The compact form's pooled value (1 + Σaccepted/Σdrafts, or Σaccepted/Σdrafted) when the log
    prints the counts."""
    if pooled is None or pooled.value is None:
        return []
    digits = 2 if pooled.quantity == "accept_len" else 3
    return [(f"  pooled {pooled.value:.{digits}f}", style)]
