"""What survives at a small size: labels cut to the part that tells them apart, numbers whole or
dropped (format helpers, segment table widths, verdict line, sparkline rows, pane header)."""

from __future__ import annotations

import re

import pytest
import pytest_asyncio
from _tui_util import (  # noqa: F401
    _isolated_config,
    finished,
    replay_app,
    sample,
    screen_text,
    wait_ended,
    wait_for,
)
from rich.cells import cell_len

from tui.app import SpecwatchApp
from tui.panes.labels import elide_middle, fit_label
from tui.panes.launch import LaunchPlan, replay_pane
from tui.widgets.pane_header import PaneHeader
from tui.widgets.segment_table import COLUMNS, SegmentTable, column_widths, verdict_line
from tui.widgets.source_pane import SourcePane

LONG = "sglang-eagle3-llama-3.1-8b-instruct-tp2-run-"
A, B = f"{LONG}broken.log", f"{LONG}fixed.log"


def test_elide_middle_keeps_both_ends():
    assert elide_middle("short.log", 20) == "short.log"
    cut = elide_middle(A, 21)
    assert cell_len(cut) == 21 and cut.startswith("sglang-ea") and cut.endswith("broken.log") and "…" in cut
    assert cell_len(elide_middle("日本語のファイル名.log", 9)) <= 9  # wide characters counted as two cells


@pytest.mark.parametrize("width", [12, 16, 20, 30, 40])
def test_fit_label_tells_peers_apart(width):
    a, b = fit_label(A, width, (A, B)), fit_label(B, width, (A, B))
    assert cell_len(a) <= width and cell_len(b) <= width
    assert "broken" in a and "fixed" in b
    assert a.startswith("…") and b.startswith("…")  # the shared start went first


def test_fit_label_whole_when_it_fits_and_alone_elided_in_the_middle():
    assert fit_label(A, len(A), (A, B)) == A
    alone = fit_label(A, 20, ())
    assert alone.startswith("sglang") and alone.endswith(".log")


def test_segment_table_columns_fit_their_widest_cell():
    rows = [("0", "12:00:01", "EAGLE3 steps=3 topk=1 ndt=4 draft=x", "152", "2.29 ± 0.05", "0.429 ± 0.016")]
    rows.append(("1", "12:09:01", "EAGLE3 steps=5", "1524", "12.29 ± 10.05", "0.429 ± 0.016"))
    widths = column_widths(rows, 60)
    keys = [k for k, _ in COLUMNS]
    assert widths[keys.index("n")] == 4 and widths[keys.index("al")] == len("12.29 ± 10.05")
    assert widths[keys.index("rate")] == len("rate (drafts)")
    assert widths[keys.index("config")] >= 8
    assert sum(widths) + 2 * len(COLUMNS) <= 60 or widths[keys.index("config")] == 8


def test_verdict_line_shortens_by_words_never_digits():
    c = {"segments": [0, 1], "diff": 0.88, "ci95": [0.76, 1.0], "verdict": "higher"}
    long = verdict_line(c).plain
    assert long == "segment 0 → 1: +0.88 (95% CI +0.76 … +1.00) higher"
    for width in (40, 30, 20):
        line = verdict_line(c, width).plain
        assert len(line) <= width and "+0.88" in line and line.endswith("higher")
    assert verdict_line(None, 30).plain == "one segment so far"
    assert verdict_line(None, 80, measured=0).plain == "no accept len measured yet"  # 0 records: not "one"


async def test_narrow_panes_keep_labels_counts_and_full_n():
    panes = [replay_pane(sample(f), name, speed=None) for f, name in (("ab_a.log", A), ("ab_b.log", B))]
    app = SpecwatchApp(LaunchPlan(panes, compare=True))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ended(pilot)
        await pilot.pause()
        headers = [p.query_one(PaneHeader) for p in app.screen.query(SourcePane)]
        texts = [h.plain for h in headers]
        assert "broken.log" in texts[0] and "fixed.log" in texts[1], texts
        for pane, text in zip(app.screen.query(SourcePane), texts):
            records = f"{pane.state.stats.records:,} records"
            assert records in text, text  # the count, whole
        shown = screen_text(app)
        for pane in app.screen.query(SourcePane):
            assert f"(n={pane.state.stats.current.all.accept_len.n})" in shown


async def test_segment_table_n_is_whole_after_updates():
    app = replay_app("sglang_eagle3_restart.log", speed=None)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        await pilot.pause()
        table = app.screen.query_one(SegmentTable)
        assert table.row_texts()
        for i, (key, _) in enumerate(COLUMNS):
            if key == "config":
                continue
            col = next(c for k, c in table.columns.items() if k.value == key)
            widest = max(cell_len(r[i]) for r in table.row_texts())
            assert col.get_render_width(table) - 2 >= widest, (key, widest)
        assert sum(c.get_render_width(table) for c in table.columns.values()) <= table.size.width


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def restart_replayed(tmp_path_factory):
    """One replay of sglang_eagle3_restart.log run to its end, shared by the tests at each width
    (each resizes the terminal: the numbers are laid out again for the new width, as when a user
    resizes; the replay itself is the same at every width)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg")))
        app = replay_app("sglang_eagle3_restart.log", speed=None)
        async with app.run_test(size=(90, 60)) as pilot:
            await finished(pilot)
            yield pilot


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("width", [66, 70, 74, 78, 84, 90])
async def test_a_value_and_its_interval_are_never_split_over_two_lines(restart_replayed, width):
    from tui.widgets.numbers import NumbersPanel

    pilot = restart_replayed
    app = pilot.app
    await pilot.resize_terminal(width, 60)
    panel = app.screen.query_one(NumbersPanel)
    await wait_for(pilot, lambda: app.screen.size.width == width, f"the screen {width} wide")
    await finished(pilot)
    assert not panel.has_class("-compact")
    for line in panel.plain.splitlines():
        assert not line.rstrip().endswith(("±", "printed", "normalised")), panel.plain
    # the printed rate with its interval, on one line
    assert re.search(r"printed \d\.\d{3} ± \d\.\d{3}", panel.plain), panel.plain
