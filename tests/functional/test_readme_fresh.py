"""README.md's sample output and docs/screenshot.svg are what the code prints now (issue 31 item
5): both are made by tools/gen_readme.py, and this fails when either is stale. Fix with
``python tools/gen_readme.py`` after a deliberate change (and look at the picture)."""

from __future__ import annotations

import importlib.util
import sys

from _tui_util import ROOT, _isolated_config  # noqa: F401

spec = importlib.util.spec_from_file_location("gen_readme", ROOT / "tools" / "gen_readme.py")
assert spec is not None and spec.loader is not None
gen = importlib.util.module_from_spec(spec)
sys.modules["gen_readme"] = gen
spec.loader.exec_module(gen)


def test_the_readme_shows_what_the_code_prints() -> None:
    text = gen.README.read_text(encoding="utf-8")
    blocks = {m.group("name"): m.group("body") for m in gen.BLOCK.finditer(text)}
    assert set(blocks) == {"summary", "demo"}
    for name, body in blocks.items():
        assert body == gen.GENERATORS[name](), (
            f"README.md's {name!r} block is stale: python tools/gen_readme.py"
        )


async def test_the_screenshot_is_what_the_demo_shows() -> None:
    got = gen.normalise(await gen._screenshot())
    want = gen.normalise(gen.SCREENSHOT.read_text(encoding="utf-8"))
    assert got == want, "docs/screenshot.svg is stale: python tools/gen_readme.py"
    assert "broken" in got and "fixed" in got  # the demo, not some other screen


def test_a_stale_block_is_found() -> None:
    text = gen.README.read_text(encoding="utf-8").replace("records 1748", "records 1747", 1)
    assert text != gen.README.read_text(encoding="utf-8")
    assert gen.readme(text) == gen.README.read_text(encoding="utf-8")  # made again from the code
