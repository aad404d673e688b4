"""The per-request distribution pane (issue 12): shown with per-request records, A and B overlaid
in a compare, hidden without them."""

from __future__ import annotations

import io

from _tui_util import _isolated_config, replay_app, wait_ended, wait_for  # noqa: F401
from rich.console import Console

from tui.core.stats.requests import RequestSet
from tui.widgets.request_hist import RequestHist, rows
from tui.widgets.source_pane import SourcePane


def finish_log(path, als: list[float]) -> str:
    lines = [
        f"[2026-05-01 10:00:{i:02d}] Finish: obj=GenerateReqInput(rid='r{i}'), "
        f"out={{'meta_info': {{'spec_verify_ct': 20, 'spec_accept_length': {al}, "
        f"'spec_accept_histogram': [5, 5, 10]}}}}"
        for i, al in enumerate(als)
    ]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_rows_share_one_axis():
    a, b = RequestSet(), RequestSet()
    for v in (2.0, 2.0, 2.5):
        a.add(v)
    b.add(3.0)
    got = rows([a, b], max_rows=4)
    assert got[0][0] == 2.0 and got[-1][1] > 3.0
    assert sum(r[2][0] for r in got) == 1.0 and sum(r[2][1] for r in got) == 1.0
    assert len(got) <= 4


async def test_compare_overlays_a_and_b(tmp_path):
    a = finish_log(tmp_path / "a.log", [2.0, 2.2, 2.4, 2.6])
    b = finish_log(tmp_path / "b.log", [3.1, 3.3])
    app = replay_app(a, b, compare=True)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_ended(pilot)
        panes = list(app.screen.query(SourcePane))
        await wait_for(pilot, lambda: all(p.query_one(RequestHist).has_class("-shown") for p in panes))
        for pane in panes:
            assert len(pane.state.history) == 0  # requests are not points of the interval charts
            console = Console(width=200, record=True, file=io.StringIO())
            console.print(pane.query_one(RequestHist).table)
            text = console.export_text()
            assert "n=4" in text and "n=2" in text, text  # both sources, in every pane
            assert "p50 2.30" in text and "p50 3.20" in text, text
            assert "steps accepting 0..k: [20, 20, 40]" in text


async def test_hidden_without_requests():
    app = replay_app("ab_a.log", compare=False)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_ended(pilot)
        pane = app.screen.query_one(SourcePane)
        assert pane.state.stats.records > 0
        assert not pane.query_one(RequestHist).has_class("-shown")
        assert not pane.query_one(RequestHist).display or pane.query_one(RequestHist).region.height == 0
