"""The main screen: one pane per source (side by side, a grid for more than two), and in compare
mode a B − A bar and an overlay chart. It is built in layers, one file each:

* :mod:`tui.screens.ticking` (:class:`TickingScreen`): the pane models and the steady tick that
  draws them on a fixed budget;
* :mod:`tui.screens.compare_view` (:class:`CompareScreen`): the B − A bar and the overlay chart;
* :mod:`tui.screens.actions` (:class:`WatchActions`): what the keys do (bound in
  :mod:`tui.screens.keys`);
* this module (:class:`WatchScreen`): the widgets, the grid's shape, and one worker per source
  (:func:`tui.screens.feeding.feed`) that feeds its pane's model and never draws.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Container, Grid, Horizontal, Vertical
from textual.widgets import Header

from tui.core.model.sanitize import visible
from tui.screens.actions import WatchActions
from tui.screens.feeding import feed
from tui.screens.keys import WATCH_KEYS
from tui.screens.messages import WatchReady
from tui.widgets.compare_bar import CompareBar
from tui.widgets.history_chart import HistoryChart
from tui.widgets.keys_footer import KeysFooter
from tui.widgets.layout import grid_shape, row_height
from tui.widgets.source_pane import SourcePane


class WatchScreen(WatchActions):
    BINDINGS = [k.binding() for k in WATCH_KEYS]

    # -- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        panes = [
            SourcePane(i, st, chart=self.charts, log=self.logs, id=f"pane-{i}")
            for i, st in enumerate(self.states)
        ]
        with Vertical(id="body"):
            if self.plan.compare and len(panes) == 2:
                yield CompareBar(id="compare")
            box = Grid(*panes, id="panes") if len(panes) > 2 else Horizontal(*panes, id="panes")
            yield box
            if self.plan.compare and len(panes) == 2:
                with Container(id="overlay-box"):
                    yield HistoryChart(id="overlay")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.title = visible(self.plan.title)  # names of files and hosts: shown, never obeyed
        self.sub_title = visible(self._subtitle())
        self._shape_grid()
        for box in self.query("#overlay-box"):
            box.display = self.overlay
        self.set_class(self.plan.compare and len(self.states) == 2, "-compare")
        self.update_layout()
        for i in range(len(self.states)):
            self.run_worker(
                feed(self.plan.panes[i], self.states[i], i, self.post_message),
                group="sources",
                name=f"source-{i}",
                exit_on_error=False,
            )
        self.start_ticking()
        panes = self.panes
        if panes:  # none while the app is already exiting (a stop signal at start-up)
            panes[0].focus()
        for pane in panes:  # the headers are in the very first frame; the numbers follow with the tick
            pane.show_status(frozen=self.frozen, extra=self.pane_extra(pane), peers=self.peers)
        self.call_after_refresh(self.tick)
        self.post_message(WatchReady())  # a stop signal from start-up may end the app from now on

    def on_resize(self) -> None:
        self._shape_grid()

    def _shape_grid(self) -> None:
        grid = self.query_one("#panes")
        if isinstance(grid, Grid):
            cols, rows = grid_shape(len(self.states), self.size.width or self.app.size.width)
            grid.styles.grid_size_columns = cols
            grid.styles.grid_size_rows = rows
            fixed = row_height(rows, grid.size.height or self.app.size.height - 2)
            grid.styles.grid_rows = str(fixed) if fixed else "1fr"

    def _subtitle(self) -> str:
        n = len(self.states)
        kind = "replay" if all(s.replay for s in self.states) else "watch"
        return f"{kind} · {n} source{'s' if n != 1 else ''}" + (" · compare" if self.plan.compare else "")
