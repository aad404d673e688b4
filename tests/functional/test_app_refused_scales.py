"""Refused values set no scale in the app (issue 23): next to a log with ``1e308`` / ``99`` / ``-1``
/ ``nan`` lines, a clean pane's sparklines and the chart keep the clean data's range, and no
refused value is drawn."""

from __future__ import annotations

from _refused_util import generated_log
from _tui_util import _isolated_config, replay_app, screen_text, wait_ended  # noqa: F401


async def test_refused_values_set_no_shared_scale(tmp_path):
    mixed, clean = generated_log(2)
    (tmp_path / "clean.log").write_text("".join(clean))
    (tmp_path / "mixed.log").write_text("".join(mixed))
    app = replay_app(str(tmp_path / "clean.log"), str(tmp_path / "mixed.log"))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        scales = app.screen.scales()
        lo, hi = scales["accept_len"]
        assert 1.0 <= lo and hi <= 4.25, scales  # the clean values' range (1.0 … 4.0), rounded out
        assert scales["accept_rate"][1] <= 1.0
        for st in app.screen.states:
            assert max(p.accept_len for p in st.history if p.accept_len is not None) <= 4.0
            assert min(p.accept_len for p in st.history if p.accept_len is not None) >= 1.0
        overlay = app.screen.overlay_data(None)
        ys = [y for s in overlay.series for y in s.ys]
        assert ys and max(ys) <= 4.0 and min(ys) >= 1.0
        text = screen_text(app)
        assert "e+308" not in text and "99.00" not in text
