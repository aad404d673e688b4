"""Each segment of a source: when it started, its config, n and mean ± CI of accept len (and the
normalised rate) — the before/after of a restart at a glance. Rows are updated in place (no
clear-and-refill: a DataTable relayout per row removal is costly)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable

from tui.core.model.records import format_ts
from tui.core.model.sanitize import number, visible
from tui.core.stats import SourceStats
from tui.core.stats.rates import normalise_transform
from tui.panes.pane_numbers import DASH, mean_ci_text, mean_hw, short

COLUMNS = (
    ("seg", "#"),
    ("start", "start"),
    ("config", "config"),
    ("n", "n"),
    ("al", "accept len"),
    ("rate", "rate (drafts)"),
)


PAD = 2  # a DataTable cell's padding (one column each side)
CONFIG_MIN = 8


def segment_row(seg) -> tuple[str, ...]:
    """One segment's cells, each whole (the table cuts only the config, to its column)."""
    m = seg.all
    mean, hw = mean_hw(m.accept_len)
    tr = normalise_transform(seg.rate_definition().drafts_per_step)
    if tr and m.accept_len.n:
        nm, nh = mean_hw(m.accept_len, tr)
        rate = mean_ci_text(nm, nh, m.accept_len.n, 3).rsplit(" (n=", 1)[0]
    else:
        rate = DASH
    start = format_ts(seg.start_ts if seg.start_ts is not None else m.first_ts)
    config = seg.label or seg.config.label()
    if seg.reason not in ("start", "server_args", "args_dict", "non_default_args", "version", "engine_init"):
        config = f"({seg.reason}) {config}"
    return (
        str(seg.index),
        start[11:19] if start else DASH,
        visible(config),
        str(m.records),
        mean_ci_text(mean, hw, m.accept_len.n).rsplit(" (n=", 1)[0] if m.accept_len.n else DASH,
        rate,
    )


def column_widths(rows: Sequence[tuple[str, ...]], width: int) -> tuple[int, ...]:
    """Each column as wide as its widest cell (numbers are never cut); the config column gets
    what is left of ``width`` (at least ``CONFIG_MIN``) and its cells are cut to it."""
    widths = [max([cell_len(title), *(cell_len(r[i]) for r in rows)]) for i, (_, title) in enumerate(COLUMNS)]
    ci = CONFIG_COLUMN
    others = sum(w for i, w in enumerate(widths) if i != ci) + PAD * len(COLUMNS)
    widths[ci] = min(widths[ci], max(CONFIG_MIN, width - others))
    return tuple(widths)


CONFIG_COLUMN = [key for key, _ in COLUMNS].index("config")


class SegmentTable(DataTable):
    DEFAULT_CSS = """
    SegmentTable {
        height: auto;
        max-height: 7;
        overflow-x: hidden;
        scrollbar-size-vertical: 1;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, show_cursor=True, **kwargs)
        self._rows: dict[int, tuple[str, ...]] = {}
        self._widths: tuple[int, ...] = ()
        self._last: tuple[SourceStats, int | None] | None = None
        self.highlight_index: int | None = None

    def on_resize(self) -> None:
        if self._last is not None:
            self.sync(*self._last)

    def sync(self, stats: SourceStats, selected: int | None) -> None:
        self._last = (stats, selected)
        segs = list(stats.segments)
        full = {seg.index: segment_row(seg) for seg in segs}
        widths = column_widths(list(full.values()), self.size.width or 120)
        config_w = widths[CONFIG_COLUMN]
        rows = {
            i: (*r[:CONFIG_COLUMN], short(r[CONFIG_COLUMN], config_w), *r[CONFIG_COLUMN + 1 :])
            for i, r in full.items()
        }
        if widths != self._widths or any(i not in full for i in self._rows):
            # a column must change its width (a longer n, a resize), or the stats were reset
            # (replay jumped back): build the table again, every column at its width
            self._widths = widths
            self.clear(columns=True)
            self._rows.clear()
            self.highlight_index = None
            for (key, title), w in zip(COLUMNS, widths):
                self.add_column(title, key=key, width=w)
        for index, row in rows.items():
            old = self._rows.get(index)
            if old is None:
                self.add_row(*map(Text, row), key=str(index))  # plain text: never markup
            elif old != row:
                for (key, _), new, was in zip(COLUMNS, row, old):
                    if new != was:
                        self.update_cell(str(index), key, Text(new))
            self._rows[index] = row
        target = selected if selected is not None else segs[-1].index
        if target != self.highlight_index and str(target) in self.rows:
            self.highlight_index = target
            self.move_cursor(row=self.get_row_index(str(target)), animate=False)

    def row_texts(self) -> list[tuple[str, ...]]:
        return [self._rows[i] for i in sorted(self._rows)]


def verdict_line(c: dict | None, width: int = 200, measured: int = 1) -> Text:
    """The last two segments compared, in the longest form that fits ``width`` (numbers are kept
    whole: the shorter forms leave words out, never digits); with no comparison, what there is:
    ``measured`` segments with accept len values (0 or 1)."""
    if c is None:
        said: tuple[str, ...] = (
            ("one measured segment so far: a restart (or n) starts the next", "one segment so far")
            if measured
            else ("no accept len measured yet", "nothing measured yet")
        )
        fits = [w for w in said if len(w) <= width]
        return Text(fits[0] if fits else said[-1], style="dim")
    a, b = c["segments"]
    if c.get("diff") is None or not c.get("ci95"):
        t = Text(f"segment {a} → {b}: ", style="bold")
        t.append(f"insufficient data ({c.get('reason') or 'not enough records'})", style="dim")
        return t
    lo, hi = c["ci95"]
    words = {
        "higher": "higher",
        "lower": "lower",
        "no_difference": "no significant difference",
        "insufficient": "insufficient data",
    }[c["verdict"]]
    diff = number(c["diff"], signed=True)
    ci = f"(95% CI {number(lo, signed=True)} … {number(hi, signed=True)}) "
    forms = (
        (f"segment {a} → {b}: ", f"{diff} {ci}"),
        (f"{a}→{b}: ", f"{diff} {ci}"),
        (f"{a}→{b}: ", f"{diff} "),
    )
    for head, body in forms:
        if len(head) + len(body) + len(words) <= width:
            break
    t = Text(head, style="bold")
    t.append(body)
    t.append(words, style="bold")
    return t
