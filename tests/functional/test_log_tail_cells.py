"""Random bytes in a log keep the log tail's right border in place: every row the tail draws is
exactly as wide as the view, by Rich's count and by the count of a terminal that follows the
Unicode tables (tui/widgets/cells.py), cut at the width and wrapped (``w``)."""

from __future__ import annotations

import random

from _tui_util import _isolated_config, replay_app, wait_ended, wait_for  # noqa: F401
from rich.cells import cell_len

from tui.core.model.sanitize import visible
from tui.widgets.cells import exact_cells, unicode_width
from tui.widgets.log_tail import TailView

DECODE = (
    "[2026-11-20 09:01:{s:02d}] Decode batch, #running-req: 3, #token: 1200, token usage: 0.01, "
    "accept len: 2.50, accept rate: 0.40, cuda graph: True, gen throughput (token/s): 150.00, #queue-req: 0\n"
)


def random_lines(n: int, seed: int) -> list[bytes]:
    """Lines of random bytes (no newline inside), with tabs, combining marks, zero-width and wide
    characters, Hangul jamo and emoji among them."""
    rnd = random.Random(seed)
    extra = "\t\u0301\u0308\u200b\u200d\ufeff\u00ad\u1160\u0903\ue000\u2028中😀°…é".encode()
    out = []
    for _ in range(n):
        data = bytearray(rnd.randbytes(rnd.randint(20, 300)))
        for _ in range(rnd.randint(0, 8)):
            at = rnd.randint(0, len(data))
            data[at:at] = rnd.choice(extra.decode()).encode()
        out.append(bytes(data).replace(b"\n", b" ").replace(b"\r", b" "))
    return out


def terminal_cells(text: str) -> int:
    widths = [unicode_width(ch) for ch in text]
    assert None not in widths, [ch for ch, w in zip(text, widths) if w is None]
    return sum(w for w in widths if w is not None)


def test_exact_cells_of_random_text():
    for line in random_lines(2000, 1):
        shown = exact_cells(visible(line.decode("utf-8", "replace")))
        assert cell_len(shown) == terminal_cells(shown)


def _rows_ok(view: TailView) -> list[str]:
    width = view.size.width
    bad = []
    for y in range(view.size.height):
        strip = view.render_line(y)
        text = "".join(seg.text for seg in strip)
        if strip.cell_length != width or cell_len(text) != width or terminal_cells(text) != width:
            bad.append(
                f"row {y}: {strip.cell_length}/{cell_len(text)}/{terminal_cells(text)} != {width}: {text!r}"
            )
    return bad


async def test_random_bytes_keep_every_tail_row_at_the_view_width(tmp_path):
    log = tmp_path / "random.log"
    body = b""
    for i, line in enumerate(random_lines(400, 7)):
        body += DECODE.format(s=i % 60).encode() + line + b"\n"
    log.write_bytes(body)
    for size in ((160, 45), (70, 40)):  # with line numbers, and without (a row may start with any character)
        await _check_rows(replay_app(str(log), speed=None), size)


async def _check_rows(app, size: tuple[int, int]) -> None:
    async with app.run_test(size=size) as pilot:
        await wait_ended(pilot)
        view = app.screen.query_one(TailView)
        await wait_for(pilot, lambda: len(view.lines) >= view.size.height > 0, "a full log tail")
        assert _rows_ok(view) == []
        await pilot.press("w")  # wrapped
        await pilot.pause()
        await wait_for(pilot, lambda: view.wrap, "view.wrap")
        assert _rows_ok(view) == []
