"""Each segment of a source: when it started, its config, n and mean ± CI of accept len (and the
normalised rate) — the before/after of a restart at a glance. Rows are updated in place (no
clear-and-refill: a DataTable relayout per row removal is costly)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from tui.core.records import format_ts
from tui.core.sanitize import number, visible
from tui.core.stats import SourceStats
from tui.core.stats.rates import normalise_transform
from tui.format import DASH, mean_ci_text, mean_hw, short

COLUMNS = (
    ("seg", "#"),
    ("start", "start"),
    ("config", "config"),
    ("n", "n"),
    ("al", "accept len"),
    ("rate", "rate (drafts)"),
)


FIXED_W = 52  # columns other than config, with cell padding


def segment_row(seg, config_w: int = 44) -> tuple[str, ...]:
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
        short(visible(config), config_w),
        str(m.records),
        mean_ci_text(mean, hw, m.accept_len.n).rsplit(" (n=", 1)[0] if m.accept_len.n else DASH,
        rate,
    )


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
        self.highlight_index: int | None = None

    def on_mount(self) -> None:
        for key, title in COLUMNS:
            self.add_column(title, key=key)

    def sync(self, stats: SourceStats, selected: int | None) -> None:
        segs = list(stats.segments)
        indices = {s.index for s in segs}
        if any(i not in indices for i in self._rows):  # stats were reset (replay jumped back)
            self.clear()
            self._rows.clear()
        config_w = max(12, (self.size.width or 120) - FIXED_W)
        for seg in segs:
            row = segment_row(seg, config_w)
            old = self._rows.get(seg.index)
            if old is None:
                self.add_row(*map(Text, row), key=str(seg.index))  # plain text: never markup
            elif old != row:
                for (key, _), new, was in zip(COLUMNS, row, old):
                    if new != was:
                        self.update_cell(str(seg.index), key, Text(new), update_width=True)
            self._rows[seg.index] = row
        target = selected if selected is not None else segs[-1].index
        if target != self.highlight_index and str(target) in self.rows:
            self.highlight_index = target
            self.move_cursor(row=self.get_row_index(str(target)), animate=False)

    def row_texts(self) -> list[tuple[str, ...]]:
        return [self._rows[i] for i in sorted(self._rows)]


def verdict_line(c: dict | None) -> Text:
    if c is None:
        return Text("one measured segment so far: a restart (or n) starts the next", style="dim")
    a, b = c["segments"]
    t = Text(f"segment {a} → {b}: ", style="bold")
    if c.get("diff") is None or not c.get("ci95"):
        t.append(f"insufficient data ({c.get('reason') or 'not enough records'})", style="dim")
        return t
    lo, hi = c["ci95"]
    words = {
        "higher": "higher",
        "lower": "lower",
        "no_difference": "no significant difference",
        "insufficient": "insufficient data",
    }[c["verdict"]]
    t.append(
        f"{number(c['diff'], signed=True)} (95% CI {number(lo, signed=True)} … {number(hi, signed=True)}) "
    )
    t.append(words, style="bold")
    return t
