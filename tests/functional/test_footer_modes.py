"""The footer shows the keys of the screen's mode: no replay keys in a live view, no playing keys
once a replay has ended, and only whole keys (every key still works)."""

from __future__ import annotations

from _tui_util import _isolated_config, live_app, replay_app, sample, wait_ended, wait_for  # noqa: F401


def footer(app) -> list[str]:
    return [k.description for k in app.screen.query("FooterKey") if k.description]


async def test_live_view_has_no_replay_keys(tmp_path):
    log = tmp_path / "live.log"
    log.write_text(open(sample("ab_a.log")).read())
    app = live_app(log, tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: app.screen.states[0].stats.records > 0, "records")
        await wait_for(pilot, lambda: "Pause" in footer(app), "the footer")
        keys = footer(app)
        assert "Faster" not in keys and "Slower" not in keys and "Help" in keys, keys
        await pilot.press("plus")  # still bound: it says why it does nothing here
        await pilot.pause()
        await wait_for(
            pilot,
            lambda: any("speed applies to replays" in n.message for n in app._notifications),
            "any(('speed applies to replays' in n.message for n in app...",
        )


async def test_replay_keys_while_it_plays_and_not_once_it_ended():
    app = replay_app("ab_a.log", speed=None)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        app.screen.tick()
        await wait_for(pilot, lambda: "Pause" not in footer(app), "the ended replay's footer")
        keys = footer(app)
        assert not {"Pause", "Faster", "Slower", "Restarted"} & set(keys) and "Prev seg" in keys, keys


async def test_narrow_footer_keeps_whole_keys():
    app = replay_app("ab_a.log", speed=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ended(pilot)
        app.screen.tick()
        await pilot.pause()
        every = list(app.screen.query("FooterKey"))
        palette = [k for k in every if k.has_class("-command-palette")]
        keys = [k for k in every if k.description and k not in palette]
        assert keys and len(palette) == 1, [k.description for k in every]
        assert sum(k.outer_size.width for k in keys) + palette[0].outer_size.width <= 80
        assert all(k.region.right <= palette[0].region.x for k in keys)  # whole, none under the palette
