"""StripLines (the numbers block and pane headers): laid out once, and only the rows whose text
changed are marked for drawing again; a change of height asks for a layout."""

from __future__ import annotations

from _tui_util import wait_for
from rich.text import Text
from textual.app import App, ComposeResult

from tui.widgets.strip_lines import StripLines


class _One(App):
    def compose(self) -> ComposeResult:
        yield StripLines()


async def test_only_changed_rows_are_redrawn_and_height_follows_the_rows():
    app = _One()
    async with app.run_test(size=(40, 10)) as pilot:
        w = app.query_one(StripLines)
        w.set_content(Text("mean 2.50\nn=10\nrate 0.50"))
        await pilot.pause()
        await wait_for(  # drawn and laid out: the height of its 3 rows, no layout pending
            pilot,
            lambda: w.plain == "mean 2.50\nn=10\nrate 0.50" and w.size.height == 3 and not w._layout_required,
            "the 3 rows drawn and laid out",
            show=lambda: (w.plain, w.size, w._layout_required),
        )
        w._repaint_regions.clear()
        w.set_content(Text("mean 2.51\nn=10\nrate 0.50"))  # one number changed
        rows = {r.y for r in w._repaint_regions}
        assert rows == {0} and not w._layout_required
        w._repaint_regions.clear()
        w.set_content(Text("mean 2.51\nn=10\nrate 0.50"))  # nothing changed: nothing to draw
        assert not w._repaint_regions
        w.set_content(Text("mean 2.51\nn=11\nrate 0.50\n⚠ small sample"))  # a row more
        assert w._layout_required
        await pilot.pause()
        await wait_for(
            pilot,
            lambda: w.size.height == 4 and w.plain.endswith("⚠ small sample"),
            "w.size.height == 4 and w.plain.endswith('⚠ small sample')",
        )
        w.set_content(Text("[bold]not markup[/]"))  # a one-row Text: its own characters, never markup
        await pilot.pause()
        await wait_for(
            pilot,
            lambda: w.plain.startswith("[bold]not markup[/]"),
            "w.plain.startswith('[bold]not markup[/]')",
        )
        assert w.size.height == 1


async def test_a_long_row_wraps_at_the_width():
    app = _One()
    async with app.run_test(size=(20, 10)) as pilot:
        w = app.query_one(StripLines)
        w.set_content(Text("word " * 10))
        await pilot.pause()
        await wait_for(
            pilot,
            lambda: len(w.lines) > 1 and all(line.cell_length <= 20 for line in w.lines),
            "len(w.lines) > 1 and all((line.cell_length <= 20 for line...",
        )
