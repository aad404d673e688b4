"""Per-rank accept len (DP ranks) and per-position acceptance bars (vLLM), for the segment
shown; hidden when the log has neither."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from tui.core.model.sanitize import number, visible
from tui.core.stats.segments import Segment
from tui.panes.pane_numbers import mean_hw, number_or_dash
from tui.widgets._colours import hex_color

BAR_W = 24
MAX_RANKS_SHOWN = 8


def _bar(frac: float, width: int = BAR_W) -> str:
    frac = min(1.0, max(0.0, frac))
    full = int(frac * width)
    rest = frac * width - full
    part = " ▏▎▍▌▋▊▉"[int(rest * 8)] if full < width else ""
    return ("█" * full + part).ljust(width)


class Breakdown(Static):
    DEFAULT_CSS = """
    Breakdown {
        height: auto;
        padding: 0 1;
        display: none;
    }
    Breakdown.-shown {
        display: block;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", **kwargs)
        self.ranks: dict[str, tuple[float | None, float | None, int]] = {}
        self.positions: list[float] = []
        self._key: tuple | None = None

    def show_segment(self, seg: Segment) -> None:
        ranks = {k: v for k, v in seg.ranks.items() if v.accept_len.n}
        self.ranks = (
            {k: (*mean_hw(v.accept_len), v.accept_len.n) for k, v in ranks.items()} if len(ranks) > 1 else {}
        )
        self.positions = seg.all.per_position() or []
        shown = bool(self.ranks or self.positions)
        self.set_class(shown, "-shown")
        key = (repr(self.ranks), tuple(self.positions), self.app.theme)
        if not shown or key == self._key:  # nothing to show, or the same as shown
            return
        self._key = key
        colour = hex_color(self.app, "primary")
        muted = hex_color(self.app, "foreground-muted")
        t = Table.grid(padding=(0, 1))
        t.add_column(style="bold", no_wrap=True)
        t.add_column(no_wrap=True)
        t.add_column(no_wrap=True)
        if self.ranks:
            top = max((m for m, _, _ in self.ranks.values() if m is not None), default=1.0)
            items = sorted(self.ranks.items())
            for rank, (mean, hw, n) in items[:MAX_RANKS_SHOWN]:
                lo = 1.0
                frac = 0.0 if mean is None else (mean - lo) / max(1e-9, top - lo) if top > lo else 1.0
                label = Text(
                    f"{number_or_dash(mean)} ± {number_or_dash(hw)}  n={n}"
                    if hw is not None
                    else f"{number_or_dash(mean)}  n={n}"
                )
                t.add_row(
                    Text(visible(rank) if rank else "(untagged)"), Text(_bar(frac), style=colour), label
                )
            if len(items) > MAX_RANKS_SHOWN:
                t.add_row(
                    Text("…", style=muted),
                    Text(f"{len(items) - MAX_RANKS_SHOWN} more ranks", style=muted),
                    Text(""),
                )
        if self.positions:
            for i, p in enumerate(self.positions, 1):
                t.add_row(
                    Text(f"draft pos {i}"), Text(_bar(p), style=colour), Text(f"{number(p, 3)} accepted")
                )
        self.update(t)
