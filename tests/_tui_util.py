"""Helpers for the TUI tests: build apps on sample logs, wait for sources, read the screen."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from _wait import wait_until_async

from tui.app import SpecwatchApp
from tui.core.sources.lines import START
from tui.core.sources.spec import parse_source_spec
from tui.panes.launch import LaunchPlan, PaneSpec, live_panes, replay_pane

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
SIZE = (160, 45)


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path, monkeypatch):
    """Themes remembered in a throwaway XDG config dir, never the user's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def sample(name: str) -> str:
    return str(SAMPLES / name)


def short_samples(tmp_path: Path, *names: str, lines: int = 400) -> list[str]:
    """The first ``lines`` lines of each sample log, written once each into ``tmp_path`` under the
    sample's own name, as paths in the order asked (a name asked twice is one file, twice): a
    server's start, its configuration and a few hundred records, for the tests of the layout,
    which need what a pane shows and not the whole file (a whole sample is replayed in ~1 s of CPU,
    16 of them in a grid for a minute on a busy machine)."""
    out = []
    for name in names:
        path = tmp_path / name
        if not path.exists():
            with open(SAMPLES / name, "rb") as f:
                path.write_bytes(b"".join(f.readline() for _ in range(lines)))
        out.append(str(path))
    return out


def replay_app(
    *names: str, compare: bool | None = None, speed: float | None = None, save_dir=None, **kw
) -> SpecwatchApp:
    panes = [replay_pane(sample(n) if "/" not in n else n, None, speed=speed) for n in names]
    plan = LaunchPlan(panes, compare=(len(panes) == 2) if compare is None else compare)
    return SpecwatchApp(plan, save_dir=save_dir, **kw)


def live_app(path: Path, tmp_path: Path) -> SpecwatchApp:
    """The app following ``path`` from its start (polling every 20 ms, no idle notes)."""
    panes = live_panes(
        [parse_source_spec(str(path))],
        follow=True,
        start=START,
        options={"idle_after": None, "poll_interval": 0.02, "use_inotify": False},
    )
    return SpecwatchApp(LaunchPlan(panes), save_dir=tmp_path)


def app_for(panes: list[PaneSpec], *, compare: bool = False, save_dir=None) -> SpecwatchApp:
    return SpecwatchApp(LaunchPlan(panes, compare=compare), save_dir=save_dir)


async def wait_for(pilot, cond, what: str = "", *, show=None) -> None:
    """:func:`_wait.wait_until_async` with the app running between two looks (``pilot.pause``);
    ``show()``, when given, says the state at the end of a wait that failed.

    A test waits so for whatever a key, a click or a pause is to bring about, never with one
    ``pause()`` before an ``assert``: on a busy machine ``pause()`` returns once the app looks idle,
    which a process starved of CPU also looks like, before the app has handled every message."""
    await wait_until_async(cond, what=what, pause=pilot.pause, step=0.05, show=show)


async def wait_ended(pilot) -> None:
    """Every pane's source has reached its end, and the screen has rendered it (charts, which
    are drawn in a thread, included)."""
    screen = pilot.app.screen
    await wait_for(
        pilot, lambda: all(s.status in ("ended", "error") for s in screen.states), "every source's end"
    )
    screen.tick()
    await pilot.pause()
    await wait_charts(pilot)


async def wait_ticks(pilot, n: int = 1) -> None:
    """``n`` more of the screen's ticks (scheduled, or the one a key press draws)."""
    screen = pilot.app.screen
    until = screen.ticks + n
    await wait_for(pilot, lambda: screen.ticks >= until, f"{n} more ticks")


async def finished(pilot) -> None:
    """A stable picture for a snapshot: every source ended and drawn, one more scheduled tick (the
    notices of the end are drained by it), the toasts cleared (they expire on a timer) and the
    screen drawn again."""
    await wait_ended(pilot)
    await wait_ticks(pilot)
    pilot.app.clear_notifications()
    pilot.app.screen.tick()
    await pilot.pause()
    await wait_charts(pilot)  # a chart takes new data at most once a second: drawn before the picture


async def wait_charts(pilot) -> None:
    from tui.widgets.history_chart import HistoryChart
    from tui.widgets.source_pane import SourcePane

    def settled() -> bool:
        screen = pilot.app.screen
        # every pane on the screen gave its chart the newest data (a pane skipped by a tick, e.g.
        # during a layout change, catches up at its next chart tick: up to 2 s in a grid) ...
        frozen = getattr(screen, "frozen", False)  # a frozen screen draws nothing new, by design
        if not frozen and not all(p.chart_current for p in screen.query(SourcePane) if screen.on_screen(p)):
            return False
        charts = list(screen.query(HistoryChart))
        # no data waiting anywhere (a chart hidden a moment ago may be about to show it) and every
        # chart on the screen drawn from its newest data
        return all(c._pending is None for c in charts) and all(
            c.settled for c in charts if c.display and c.size.area
        )

    await wait_for(pilot, settled, "the charts drawn")
    await pilot.pause()
    # once more: the pause may have fitted a pane again and shown a chart that takes data now
    await wait_for(pilot, settled, "the charts drawn after the last fit")
    for c in pilot.app.screen.query(HistoryChart):  # drawn again from the cache: the picture is the newest
        c.refresh()
    await pilot.pause()


def screen_text(app) -> str:
    """The visible screen as plain text (from the SVG export: one <text> run per span)."""
    svg = app.export_screenshot()
    rows: dict[str, list[tuple[float, str]]] = {}
    for m in re.finditer(r'<text[^>]*x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', svg):
        rows.setdefault(m.group(2), []).append((float(m.group(1)), html.unescape(m.group(3))))
    lines = []
    for y in sorted(rows, key=float):
        lines.append("".join(t for _, t in sorted(rows[y])).replace("\xa0", " "))
    return "\n".join(lines)


def notifications(app) -> list[str]:
    return [f"{n.title} {n.message}" for n in app._notifications]
