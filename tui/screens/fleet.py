"""The fleet screen: one row per serving instance a Prometheus scrapes (``specwatch fleet URL``),
refreshed every few seconds by a worker (a few queries for the whole fleet), sorted, filtered and
grouped by the model in :mod:`tui.panes.fleet`. Enter opens the usual pane for the row's instance,
fed by its history and then live from Prometheus; Escape comes back."""

from __future__ import annotations

import asyncio
import dataclasses
import time

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Header, Input, Static

from tui.core.fleet.fetch import refresh
from tui.core.model.sanitize import visible
from tui.core.sources.prom.api import PromAPI, PromError
from tui.core.sources.prom.history import PromHistorySource
from tui.panes.fleet import SORTS, FleetPlan, FleetView, shortened
from tui.panes.launch import LaunchPlan, PaneSpec
from tui.screens.messages import WatchReady
from tui.screens.watch import WatchScreen
from tui.widgets.fleet_table import FleetTable
from tui.widgets.keys_footer import KeysFooter


class InstanceScreen(WatchScreen):
    """One instance's pane, opened from the fleet: Escape goes back to the fleet."""

    BINDINGS = [*WatchScreen.BINDINGS, Binding("escape", "back", "Fleet", priority=True)]

    def action_back(self) -> None:
        self.app.pop_screen()


class FleetScreen(Screen):
    DEFAULT_CSS = """
    FleetScreen #fleet-status { height: auto; max-height: 2; padding: 0 1; color: $text-muted; }
    FleetScreen #fleet-table { height: 1fr; }
    FleetScreen #fleet-filter { display: none; }
    FleetScreen #fleet-filter.-on { display: block; }
    """
    BINDINGS = [
        Binding("s", "sort", "Sort"),
        Binding("slash", "filter", "Filter"),
        Binding("b", "group", "Group by"),
        Binding("r", "refresh_now", "Refresh"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, plan: FleetPlan) -> None:
        super().__init__()
        self.plan = plan
        self.view = FleetView(interval=plan.refresh)
        # steps no finer than the refresh: a young history at 1 s scrapes is not fetched again
        # whole, at one-second steps, at every refresh (the CLI keeps every sample)
        self.fleet_query = dataclasses.replace(plan.query, min_step=min(plan.refresh, 30.0))
        self.api: PromAPI | None = None
        self.refreshes = 0
        self.skipped = 0  # ticks skipped because a refresh was still running
        self.covered = False  # an instance's panes are open over it: no refresh, no drawing
        self._cells: dict[int, dict[str, str]] = {}  # id(instance) -> column -> its cell
        self._names: dict[str, str] = {}  # instance names as shown (shortened among the rows)
        self._cols_made: set[str] = set()  # the columns whose cells ``_cells`` holds
        self._made_key: tuple | None = None
        self._cells_key: tuple | None = None
        self._cells_of: object = None  # the answer they were made from (kept: ids are not reused)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="fleet-status")
        yield Input(placeholder="filter: text, or re:REGEX — Enter applies, Escape clears", id="fleet-filter")
        yield FleetTable(id="fleet-table")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.title = "specwatch fleet"
        self.sub_title = visible(self.plan.url)
        self.api = PromAPI(
            self.plan.url, self.plan.auth, timeout=self.plan.timeout, transport=self.plan.transport
        )
        self.query_one("#fleet-filter", Input).disabled = True  # not focusable while hidden
        self.query_one("#fleet-table", FleetTable).focus()
        self.show()
        self.action_refresh_now()
        self.set_interval(self.plan.refresh, self.tick)
        self.set_interval(1.0, self.show_status)
        self.post_message(WatchReady())  # a stop signal from start-up may end the app from now on

    async def on_unmount(self) -> None:
        if self.api is not None:
            await self.api.aclose()

    def on_screen_suspend(self) -> None:
        """An instance's panes opened over the fleet: the fleet is neither asked nor drawn while
        they are open (a refresh of 1,000 instances would compete with the pane's own history)."""
        self.covered = True

    def on_screen_resume(self) -> None:
        """Back from an instance: the rows drawn again, and asked again when older than a refresh."""
        if not self.covered:
            return  # the first resume is the screen's own start (on_mount asks)
        self.covered = False
        self.show()
        if self.view.updated is None or time.time() - self.view.updated >= self.plan.refresh:
            self.tick()

    # -- data -----------------------------------------------------------------------------------
    def tick(self) -> None:
        """The refresh timer: a new refresh only when none is running. A refresh slower than the
        interval is never cancelled by the next tick (it would never land): the tick is skipped,
        and the status line says how long the one in flight has been running. Nothing while an
        instance's panes cover the screen (:meth:`on_screen_resume` catches up)."""
        if self.covered:
            return
        if self.view.asking_since is not None:
            self.skipped += 1
            self.show_status()
            return
        self.action_refresh_now()

    def action_refresh_now(self) -> None:
        if self.view.asking_since is not None:
            self.show_status()  # `r` while one runs: the status line says it is running
            return
        self.view.asking_since = time.time()
        self.show_status()
        self._fetch()

    @work(group="fleet")
    async def _fetch(self) -> None:
        assert self.api is not None
        limit = self.plan.timeout
        try:
            # the whole refresh (several rounds of queries) within --timeout: a server that
            # accepts and never answers, or trickles, is an error on screen, not a wait for ever
            fleet = await asyncio.wait_for(refresh(self.api, self.fleet_query, self.view.fleet), limit)
        except TimeoutError:
            self.view.error = f"{visible(self.api.url)}: no answer within {limit:g} s (--timeout)"
            self.view.failed = time.time()
        except PromError as exc:
            self.view.error = str(exc)
            self.view.failed = time.time()
        else:
            self.view.fleet, self.view.error, self.view.updated = fleet, None, time.time()
            self.refreshes += 1
        finally:
            self.view.asking_since = None
        if self.is_attached and not self.covered:  # the screen may have gone while Prometheus answered
            self.show()

    # -- drawing --------------------------------------------------------------------------------
    def show_status(self) -> None:
        if self.covered:
            return
        width = max(20, (self.size.width or 160) - 2)
        lines = 1 if (self.size.height or 45) < 30 else 2
        text = self.view.status(self.plan.url, time.time(), width=width, lines=lines)
        for box in self.query("#fleet-status").results(Static):  # none while the app exits
            box.update(Text(text))

    def show(self) -> None:
        tables = list(self.query("#fleet-table").results(FleetTable))
        if not tables:
            return  # the app is exiting (its widgets are gone) as a refresh lands
        self.show_status()
        table = tables[0]
        width = self.size.width or 160
        cols = self.view.columns(width)
        rows = self.view.rows()
        name_width = 44 if width >= 120 else 24 if width >= 100 else 16
        # a row's cells depend on the answer, the names' room and the rows shown (the filter:
        # names are shortened among them), not on the order: a sort or a cursor key only orders
        # the cells made at the last answer (1,000 rows' cells cost ~20 ms), and a new column (a
        # grouping label) makes only its own cells
        key = (id(self.view.fleet), name_width, self.view.filter)
        if key != self._cells_key or self.view.fleet is not self._cells_of:
            self._names = {}
            for fam in {i.family for i in rows}:  # what tells rows apart, within each family
                self._names |= shortened([i.name for i in rows if i.family == fam], name_width)
            self._cells = {id(inst): {} for inst in rows}
            self._cells_key, self._cells_of = key, self.view.fleet
        missing = [c for c in cols if c not in self._cols_made]
        if missing or key != self._made_key:
            if key != self._made_key:
                missing, self._cols_made = list(cols), set()
            for inst in rows:
                made = self._cells[id(inst)]
                made.update(zip(missing, self.view.cells(inst, missing, names=self._names)))
            self._cols_made |= set(missing)
            self._made_key = key
        table.set_rows(cols, [[self._cells[id(inst)][c] for c in cols] for inst in rows])

    def on_resize(self) -> None:
        self.show()

    # -- keys -----------------------------------------------------------------------------------
    def action_sort(self) -> None:
        self.view.cycle_sort()  # the status line says the order (no toast: a key stays fast)
        self.show()

    def action_group(self) -> None:
        self.view.cycle_group()
        self.show()

    def action_filter(self) -> None:
        box = self.query_one("#fleet-filter", Input)
        box.add_class("-on")
        box.disabled = False
        box.value = self.view.filter
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.view.filter = event.value.strip()
        bad = self.view.filter_error()
        if bad:
            self.notify(bad, severity="warning", markup=False)
        event.input.remove_class("-on")
        event.input.disabled = True
        self.query_one("#fleet-table", FleetTable).focus()
        self.show()

    def action_clear_filter(self) -> None:
        box = self.query_one("#fleet-filter", Input)
        box.remove_class("-on")
        box.disabled = True
        self.view.filter = ""
        self.query_one("#fleet-table", FleetTable).focus()
        self.show()

    def selected(self):
        rows = self.view.rows()
        table = self.query_one("#fleet-table", FleetTable)
        if not rows or not 0 <= table.cursor < len(rows):
            return None
        return rows[table.cursor]

    def on_fleet_table_selected(self, event: FleetTable.Selected) -> None:
        self.action_open()

    def action_open(self) -> None:
        inst = self.selected()
        if inst is None or self.view.fleet is None:
            return
        from tui.core.fleet.fetch import fleet_families

        names = next((n for n in fleet_families() if n.family == inst.family), None)
        if names is None:  # a target that is down and never sent a series
            self.notify(f"{inst.name}: {', '.join(inst.flags)}", severity="warning", markup=False)
            return
        labels = {
            k: inst.labels[k] for k in ("instance", "job", *names.instance_labels) if inst.labels.get(k)
        }
        plan, fleet = self.plan, self.view.fleet
        # a window that ends in the past (--end): the instance's history of that window, read once
        past = fleet.end if (plan.query.end is not None or plan.query.end_ago > 0) else None

        def opener() -> PromHistorySource:
            return PromHistorySource(
                inst.name,
                plan.url,
                names,
                labels,
                window=fleet.window,
                step=fleet.step,
                end=past,
                auth=plan.auth,
                timeout=plan.timeout,
                transport=plan.transport,
            )

        where = f"{inst.family} {inst.name} from {plan.url}"
        panes = [PaneSpec(inst.name, where, opener)]
        if plan.logs:
            log = self._log_pane(plan.logs, inst.labels)
            if log is not None:
                panes.append(log)
        title = f"specwatch fleet · {visible(inst.name)}"
        self.app.push_screen(InstanceScreen(LaunchPlan(panes, compare=False, title=title)))

    def _log_pane(self, template: str, labels: dict[str, str]) -> PaneSpec | None:
        """The pane of the row's log (``logs`` in [fleet]: a source spec from the row's labels,
        over SSH for ``host:/path``), beside its series; a template the labels cannot fill, or
        fill safely, is a warning with the reason and no pane."""
        from tui.core.fleet.logs import LogSpecError, log_spec
        from tui.core.sources.lines import START
        from tui.core.sources.spec import SourceSpecError, parse_source_spec
        from tui.panes.launch import live_panes

        try:
            spec = parse_source_spec(log_spec(template, labels))
        except (LogSpecError, SourceSpecError, ValueError) as exc:
            self.notify(f"no log pane: {visible(str(exc))}", severity="warning", markup=False)
            return None
        (pane,) = live_panes([spec], follow=self.plan.follow_logs, start=START, options={})
        return pane


__all__ = ["SORTS", "FleetScreen", "InstanceScreen"]
