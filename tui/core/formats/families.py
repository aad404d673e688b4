"""The server families there are, found by themselves: no list of them is kept anywhere.

A family is a folder holding a ``family.toml`` (:mod:`tui.core.formats.family_data`):

* every subfolder of ``tui/core/formats/`` that holds one (the bundled families);
* every package named by an entry point of the ``specwatch.formats`` group (a third-party
  family, as harlequin loads its adapters): in the distribution's metadata,

      [project.entry-points."specwatch.formats"]
      tgi = "specwatch_tgi"          # a package whose folder holds family.toml

  (an entry point may also name a :class:`FamilyData` object or a folder path as a string).

This module reads the data only (fast: the whole-buffer scanner needs the shapes before the line
parsers load); :mod:`tui.core.formats.registry` makes the plug-ins. Families are in the order
their data says (``order``, then the name). A family named twice is an error said once, at
import; a folder whose data is wrong raises :class:`FamilyDataError` naming the file and place.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.core.formats.family_data import FILE, FamilyData, FamilyDataError, load

GROUP = "specwatch.formats"
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True, slots=True)
class Family:
    data: FamilyData
    package: str | None  # the importable package of the folder (its plug-in module is in it)
    folder: Path

    @property
    def name(self) -> str:
        return self.data.name


def _bundled() -> list[Family]:
    out = []
    for folder in sorted(HERE.iterdir()):
        if (folder / FILE).is_file():
            # checked by the tests (tests/unit/test_data_family.py), not at every start
            out.append(Family(load(folder, validate=False), f"{__package__}.{folder.name}", folder))
    return out


def _entry_points() -> list[tuple[str, str]]:
    """(name, value) of each entry point of the group, as importlib.metadata finds them. Its
    answer is kept in the user cache (beside the checked family texts, family_data.cache_dir())
    under the state of every folder of ``sys.path`` (:func:`_path_state`), so that a start with an unchanged
    environment does not import importlib.metadata and walk every installed distribution
    (~15 ms here, more where hundreds are installed)."""
    import json
    import sys

    from tui.core.formats.family_data import cache_dir

    state = [[p, *_path_state(p or ".")] for p in sys.path]
    base = cache_dir()
    kept = None
    if base is not None:
        import zlib  # (hashlib costs 2 ms to import)

        # one file per sys.path, rewritten when what it holds changed (not one per state: the
        # cache would grow with every install)
        kept = base / f"entry-points-{zlib.crc32(json.dumps(sys.path).encode()):08x}"
        try:
            got = json.loads(kept.read_text(encoding="utf-8"))
            if got["state"] == state:
                return [(str(n), str(v)) for n, v in got["entry_points"]]
        except (OSError, ValueError, KeyError, TypeError):
            pass
    from importlib.metadata import entry_points

    found = [(ep.name, ep.value) for ep in entry_points(group=GROUP)]
    if kept is not None:
        try:
            kept.parent.mkdir(parents=True, exist_ok=True)
            tmp = kept.with_name(f"{kept.name}.{os.getpid()}")
            tmp.write_text(json.dumps({"state": state, "entry_points": found}), encoding="utf-8")
            os.replace(tmp, kept)
        except OSError:  # a read-only home: found again next time
            pass
    return found


def _path_state(folder: str) -> list:
    """What says the entry points of a ``sys.path`` folder changed: the name of each
    distribution in it (installing, upgrading or removing one changes them) and the modification
    time (ns) of its ``entry_points.txt`` (an edit in place changes only that file), in name
    order; [None] when it is no folder. Not the folder's own time: other files there (a log
    being written in the folder a command was started from) say nothing about entry points."""
    try:
        with os.scandir(folder) as it:
            names = sorted(e.name for e in it if e.name.endswith((".dist-info", ".egg-info")))
    except OSError:
        return [None]
    out: list = []
    for name in names:
        try:
            out.append([name, os.stat(os.path.join(folder, name, "entry_points.txt")).st_mtime_ns])
        except OSError:
            out.append([name, None])
    return out


def _load_entry_point(value: str) -> Any:
    """What ``module:attr.attr`` (or ``module``) names, as EntryPoint.load reads it."""
    import importlib

    module, _, attrs = value.partition(":")
    obj: Any = importlib.import_module(module.strip())
    for a in filter(None, attrs.strip().split(".")):
        obj = getattr(obj, a)
    return obj


def _from_entry_points() -> list[Family]:
    if os.environ.get("SPECWATCH_NO_PLUGINS") == "1":  # a clean run, whatever is installed
        return []
    out = []
    for name, value in _entry_points():
        try:
            obj = _load_entry_point(value)
        except Exception as exc:  # a broken third-party package is said, never a crash
            raise FamilyDataError(f"entry point {name} = {value!r} ({GROUP}): {exc}") from None
        if isinstance(obj, FamilyData):
            out.append(Family(obj, None, Path(".")))
        elif isinstance(obj, str | Path):
            out.append(Family(load(Path(obj)), None, Path(obj)))
        elif hasattr(obj, "__path__"):  # a package: its folder is the family's
            folder = Path(next(iter(obj.__path__)))
            out.append(Family(load(folder), obj.__name__, folder))
        else:
            raise FamilyDataError(
                f"entry point {name} = {value!r} ({GROUP}): not a package, folder or FamilyData"
            )
    return out


def discover() -> tuple[Family, ...]:
    found = _bundled() + _from_entry_points()
    seen: dict[str, Family] = {}
    for f in found:
        if f.name in seen:
            raise FamilyDataError(f"two families named {f.name!r}: {seen[f.name].folder} and {f.folder}")
        seen[f.name] = f
    return tuple(sorted(found, key=lambda f: (f.data.order, f.name)))


FAMILIES: tuple[Family, ...] = discover()
_BY_NAME = {f.name: f for f in FAMILIES}


def data(name: str) -> FamilyData:
    """The data of the family ``name`` (its own package reads its constants from it)."""
    return _BY_NAME[name].data


def displays(log_lines: bool = False) -> str:
    """The families as people write them, joined for text ("SGLang, vLLM, llama.cpp and
    Ollama"); ``log_lines``: only those whose log lines are read (not a family of ``/metrics``
    only). For help texts: derived, never a hand list."""
    shown = [f.data.display for f in FAMILIES if f.data.anchors or not log_lines]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def lines_read() -> str:
    """The lines that make records, per family: "SGLang `Decode batch` / `Finish: obj=` lines,
    ..." (the families' ``records`` anchors, all their anchors when they name none)."""
    parts = []
    for f in FAMILIES:
        d = f.data
        texts = [d.anchors[n] for n in d.records] if d.records is not None else list(d.anchors.values())
        if texts:
            parts.append(f"{d.display} " + " / ".join(f"`{t}`" for t in texts) + " lines")
    return ", ".join(parts)


def json_metrics_path() -> tuple[str, str] | None:
    """(path, what the JSON is) of the family whose server answers JSON at the default
    ``/metrics`` and serves its Prometheus text at that path instead; None when none does."""
    for f in FAMILIES:
        m = f.data.metrics
        if m.json_moves_to:
            return m.json_moves_to, m.json_is or f"{f.data.display}'s JSON"
    return None
