"""The log tail's scroll-back (PgUp / PgDn / End), search (ctrl+f, F3 / shift+F3), line numbers
and the filter shown while it is in force (Pilot: the real keys)."""

from __future__ import annotations

from _tui_util import _isolated_config, replay_app, wait_ended, wait_for  # noqa: F401

from tui.panes.state import RAW_TAIL
from tui.widgets.log_tail import LogTail, TailView
from tui.widgets.source_pane import SourcePane


async def _type(pilot, text: str) -> None:
    for ch in text:
        await pilot.press(
            ch if ch.isalnum() else {" ": "space", ".": "full_stop", ":": "colon", "/": "slash"}[ch]
        )
    await pilot.press("enter")
    await pilot.pause()


async def test_scroll_back_and_follow():
    app = replay_app("sglang_eagle3_restart.log", speed=None)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        pane = app.screen.query_one(SourcePane)
        tail = pane.query_one(LogTail)
        view = tail.query_one(TailView)
        assert RAW_TAIL >= 10_000 and len(pane.state.raw) == min(RAW_TAIL, pane.state.raw_seq)
        newest = view.lines[-1].seq
        await pilot.press("pageup")
        await pilot.pause()
        page = view.size.height - 1
        assert tail.back == page and view.lines[-1].seq == newest - page
        assert "lines back" in str(tail.border_title)
        await pilot.press("pageup", "pagedown")
        await pilot.pause()
        await wait_for(pilot, lambda: tail.back == page, "tail.back == page")
        await pilot.press("end")
        await pilot.pause()
        await wait_for(
            pilot,
            lambda: tail.back == 0 and view.lines[-1].seq == newest and not tail.border_title,
            "tail.back == 0 and view.lines[-1].seq == newest and (not ...",
        )


async def test_find_older_and_newer_lines():
    app = replay_app("sglang_eagle3_restart.log", speed=None)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        pane = app.screen.query_one(SourcePane)
        tail = pane.query_one(LogTail)
        view = tail.query_one(TailView)
        want = [r.seq for r in pane.state.raw if "post /v1/chat/completions" in r.text.lower()]
        assert len(want) >= 3
        await pilot.press("ctrl+f")
        await _type(pilot, "POST /v1/chat")
        assert tail.search == "post /v1/chat" and view.hit == want[-1]
        await pilot.press("f3")
        await pilot.pause()
        await wait_for(
            pilot,
            lambda: view.hit == want[-2] and any(r.seq == want[-2] for r in view.lines[-view.size.height :]),
            "view.hit == want[-2] and any((r.seq == want[-2] for r in ...",
        )
        await pilot.press("f3", "shift+f3")
        await pilot.pause()
        await wait_for(pilot, lambda: view.hit == want[-2], "view.hit == want[-2]")
        assert "find: post /v1/chat" in str(tail.border_title)


async def test_line_numbers_and_visible_filter():
    app = replay_app("sglang_eagle3_restart.log", speed=None)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        pane = app.screen.query_one(SourcePane)
        tail = pane.query_one(LogTail)
        view = tail.query_one(TailView)
        last = view.lines[-1]
        row = view.size.height - 1
        text = "".join(seg.text for seg in view.render_line(row))
        if last.line_no is not None:
            assert text.lstrip().startswith(str(last.line_no)), text
        await pilot.press("slash")
        await _type(pilot, "accept len")
        assert tail.filter == "accept len" and "filter: accept len" in str(tail.border_title)
        assert all("accept len" in r.text.lower() for r in view.lines)


async def test_w_wraps_long_lines():
    app = replay_app("sglang_eagle3_restart.log", speed=None)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_ended(pilot)
        pane = app.screen.query_one(SourcePane)
        view = pane.query_one(LogTail).query_one(TailView)
        width, height = view.size.width, view.size.height

        def screen() -> str:
            return "\n".join("".join(seg.text for seg in view.render_line(y)) for y in range(height))

        long = [r for r in view.lines[-height:] if len(r.text) + 8 > width and len(r.text) < 400]
        assert long
        end = long[-1].text.rstrip()[-15:]  # the end of the newest long line
        assert end not in screen()  # cut at the width
        await pilot.press("w")
        await pilot.pause()
        await wait_for(
            pilot,
            lambda: view.wrap and end.replace(" ", "") in "".join(screen().split()),
            "view.wrap and end.replace(' ', '') in ''.join(screen().sp...",
        )  # whole, over rows
        await pilot.press("w")
        await pilot.pause()
        await wait_for(
            pilot, lambda: not view.wrap and end not in screen(), "not view.wrap and end not in screen()"
        )


async def _filter(pilot, tail: LogTail, typed: str) -> None:
    from textual.widgets import Input

    await pilot.press("slash")
    await pilot.pause()
    tail.query_one(Input).value = typed  # what the user typed into the filter's input
    await pilot.press("enter")
    await pilot.pause()


async def test_regex_filter_shown_while_on_and_invalid_one_refused():
    app = replay_app("sglang_eagle3_restart.log", speed=None)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        pane = app.screen.query_one(SourcePane)
        tail = pane.query_one(LogTail)
        view = tail.query_one(TailView)
        await _filter(pilot, tail, r"re:accept len: \d\.\d+")
        assert view.lines and all("accept len" in r.text.lower() for r in view.lines)
        assert "filter: regex accept len: \\d\\.\\d+" in str(tail.border_title)
        notes = [n.message for n in app._notifications]
        assert any("only lines matching the regular expression" in m for m in notes), notes
        kept = list(view.lines)
        await _filter(pilot, tail, "re:accept (len")
        notes = [n.message for n in app._notifications]
        assert any("invalid regular expression 'accept (len'" in m for m in notes), notes
        assert view.lines == kept and "regex" in str(tail.border_title)  # the filter in force stays
        await _filter(pilot, tail, "")
        assert tail.border_title is None
