"""What the TUI commands open: one :class:`PaneSpec` per pane (pure Python, no Textual).

A pane spec says what the pane is called, where it reads from, and how to open its source
(a zero-argument factory, so the app opens sources inside its own event loop). Live sources go
through :func:`tui.core.sources.spec.open_source`, so every kind the registry knows (files, globs,
stdin, ``cmd:``, config names, SSH, metrics) works here unchanged; replays use
:class:`tui.core.sources.replay.ReplaySource`, which the app drives (pause, speed, segments).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui import resources
from tui.core.formats import LineParser
from tui.core.model.records import Marker, Record
from tui.core.sources.base import LineBatch, Source
from tui.core.sources.kinds import nice_path
from tui.core.sources.labels import numbered
from tui.core.sources.spec import SourceSpec, kind_of, open_source, source_labels

if TYPE_CHECKING:
    from tui.core.sources.window import Window

SAMPLE_ENV = "SPECWATCH_SAMPLES"
DEMO_LOG = "sglang_eagle3_restart.log"
DEMO_SPEED = 20.0
DEMO_MAX_GAP = 5.0  # seconds of log time: idle stretches of the sample do not stall the demo


@dataclass
class PaneSpec:
    label: str
    where: str
    open: Callable[[], Source]
    replay: bool = False
    path: str | None = None  # the local file, when there is one


@dataclass
class LaunchPlan:
    """Everything the app needs: the panes, the layout and a title."""

    panes: list[PaneSpec]
    compare: bool = False
    title: str = "specwatch"
    demo: bool = False
    intro: str | None = None  # a first notification (the demo explains itself)
    alerting: Any = None  # tui.cli.alert_args.Alerting: alert rules (see tui.screens.alerting)
    alert_names: list[str] | None = None  # each pane's source name (the keys of per-source rules)
    cleanup: list[Callable[[], None]] = field(default_factory=list)
    fleet: Any = None  # tui.panes.fleet.FleetPlan: the app opens the fleet screen instead of panes


def default_label(spec: SourceSpec) -> str:
    """``label=`` if given, else the config name, else the kind's short name (the file name,
    host:file, cmd:PROGRAM)."""
    return kind_of(spec).label(spec)


def unique_labels(labels: list[str]) -> list[str]:
    """Labels still alike numbered (``a (2)``); sources' labels: :func:`source_labels`."""
    return numbered(labels)


def live_panes(
    specs: list[SourceSpec], *, follow: bool, start: Any, options: dict[str, Any], stdin_fd: int | None = None
) -> list[PaneSpec]:
    """``stdin_fd``: where the log piped on stdin is now (the keys read the terminal on fd 0)."""
    labels = source_labels(specs)
    panes = []
    for spec, label in zip(specs, labels):

        def opener(spec: SourceSpec = spec) -> Source:
            if kind_of(spec).reads_stdin and stdin_fd is not None:
                from tui.core.sources.stdin import PipeSource

                idle = {"idle_after": options["idle_after"]} if "idle_after" in options else {}
                return PipeSource(stdin_fd, spec.name, where="stdin", **idle)
            return open_source(spec, follow=follow, start=start, **options)

        kind = kind_of(spec)
        panes.append(PaneSpec(label, kind.where(spec), opener, False, kind.local_path(spec)))
    return panes


def replay_pane(
    path: str,
    label: str | None,
    *,
    speed: float | None,
    max_gap: float | None = None,
    where: str | None = None,
    paths: list[str] | None = None,
    window: Window | None = None,
) -> PaneSpec:
    """``paths``: a rotated set read as one log, oldest first (``path`` its newest file);
    ``window``: only the lines between two log times."""
    from tui.core.sources.replay import ReplaySource

    name = label or os.path.basename(path)

    def opener() -> Source:
        return ReplaySource(
            path, name, speed=speed, max_gap=max_gap, stay_open=True, paths=paths, window=window
        )

    return PaneSpec(name, where or f"replay of {nice_path(path)}", opener, True, os.path.abspath(path))


# -- the demo ---------------------------------------------------------------------------------
def sample_dirs() -> list[Traversable]:
    """Where the bundled sample logs are looked for: $SPECWATCH_SAMPLES when it is set, then the
    ones shipped with specwatch (:func:`tui.resources.sample_logs`)."""
    dirs: list[Traversable] = [Path(os.environ[SAMPLE_ENV])] if os.environ.get(SAMPLE_ENV) else []
    shipped = resources.sample_logs()
    return dirs + ([shipped] if shipped is not None else [])


def find_sample(name: str) -> Traversable | None:
    """The sample log ``name`` (readable with ``read_bytes``; a file inside a zipped install has
    no path of its own: :func:`importlib.resources.as_file` gives one)."""
    for d in sample_dirs():
        if (d / name).is_file():
            return d / name
    return None


def split_at_restart(path: Traversable) -> tuple[bytes, bytes]:
    """The bytes of a log before and from its first restart (a startup marker after records)."""
    data = path.read_bytes()
    lines = data.decode("utf-8", "replace").split("\n")
    parser = LineParser("demo")
    offsets, off = [], 0
    for line in lines:
        offsets.append(off)
        off += len(line.encode("utf-8", "replace")) + 1
    seen_record = False
    for item in parser.feed_batch(LineBatch("demo", lines, offsets, 1)):
        if isinstance(item, Record):
            seen_record = True
        elif isinstance(item, Marker) and not item.continuation and seen_record:
            return data[: item.offset], data[item.offset :]
    return data, b""


def demo_plan(speed: float = DEMO_SPEED) -> LaunchPlan:
    """The two runs of the bundled EAGLE-3 sample (broken config, then the fixed restart),
    replayed side by side from their own starts, with the comparison bar between them."""
    sample = find_sample(DEMO_LOG)
    if sample is None:
        looked = ", ".join(str(d) for d in sample_dirs()) or "nowhere: this copy of specwatch ships none"
        raise FileNotFoundError(
            f"the demo needs the bundled sample logs ({DEMO_LOG}); looked in {looked}. "
            f"Set {SAMPLE_ENV}=DIR, reinstall specwatch, or use `specwatch replay FILE`"
        )
    before, after = split_at_restart(sample)
    tmp = Path(tempfile.mkdtemp(prefix="specwatch-demo-"))

    def cleanup() -> None:
        shutil.rmtree(tmp, ignore_errors=True)

    atexit.register(cleanup)
    broken, fixed = tmp / "broken.log", tmp / "fixed.log"
    broken.write_bytes(before)
    fixed.write_bytes(after or before)
    panes = [
        replay_pane(
            str(broken),
            "broken",
            speed=speed,
            max_gap=DEMO_MAX_GAP,
            where=f"run 1 of {sample.name}: EAGLE-3 draft on the wrong aux layers",
        ),
        replay_pane(
            str(fixed),
            "fixed",
            speed=speed,
            max_gap=DEMO_MAX_GAP,
            where=f"run 2 of {sample.name}: restarted with the fixed draft",
        ),
    ]
    intro = (
        f"Demo: the two runs in {sample.name} (a broken EAGLE-3 config, then the fixed restart) replayed side "
        f"by side at {speed:g}×. Keys: space pause · +/- speed · c charts · l log · ? help · q quit"
    )
    return LaunchPlan(
        panes,
        compare=True,
        title="specwatch demo: broken vs fixed EAGLE-3",
        demo=True,
        intro=intro,
        cleanup=[cleanup],
    )
