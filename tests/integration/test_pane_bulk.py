"""A pane fed whole buffers (a replay at full speed: ``LineBatch.data`` scanned at once, see
tui.panes.whole_buffer) ends in exactly the state of a pane fed the same lines one by one: statistics,
chart history, segment starts, raw tail and its tags."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

from _pane_util import batches, fed, same
from _tui_util import _isolated_config, replay_app, screen_text, wait_ended  # noqa: F401

from tui.core.pipeline.whole import summarize_file
from tui.core.sources.base import LineBatch

ROOT = Path(__file__).parent.resolve().parents[1]


def vllm_log(tmp_path: Path, lines: int) -> Path:
    path = tmp_path / "vllm.log"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gen_vllm_log.py"), "--lines", str(lines), "--out", str(path)],
        check=True,
        capture_output=True,
    )
    return path


def test_vllm_server_log_in_buffers_equals_line_by_line(tmp_path, small_chunks):
    items = batches(vllm_log(tmp_path, 30_000))
    assert all(b.data is not None for b in items if isinstance(b, LineBatch))
    bulk, fast = fed(items, True)
    line, _ = fed(items, False)
    assert fast >= 40  # most buffers went through the scanner
    assert bulk.stats.records == 3000
    same(bulk, line)


async def test_the_app_replaying_at_max_speed_shows_what_summary_says(tmp_path):
    path = vllm_log(tmp_path, 60_000)  # ~8 MB: buffers in pieces, each scanned whole
    want = summarize_file(str(path), workers=1).stats
    app = replay_app(str(path), speed=None)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        st = app.screen.states[0]
        assert st._whole_buffer is not None  # the buffers went through the scanner
        assert (st.lines, st.stats.records) == (60_002, want.records) == (60_002, 6000)
        got, exp = st.stats.current.all.accept_len, want.current.all.accept_len
        assert got.n == exp.n and math.isclose(got.mean, exp.mean, rel_tol=1e-12)
        assert f"(n={exp.n:,})" in screen_text(app) or f"(n={exp.n})" in screen_text(app)
