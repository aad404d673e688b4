"""The data of a server family: what its folder's ``family.toml`` declares.

A family is a folder (``tui/core/formats/<family>/``, or a third-party package named by a
``specwatch.formats`` entry point) holding a ``family.toml``, read by :func:`load`, and only the
code data cannot say (a plug-in class, named by ``plugin``). The file declares (docs/formats.md,
"The data of a family"):

* its name, display name and the order its lines are offered in;
* its anchors (``[anchors]``: the texts its metric lines are found by) and marker texts
  (``[markers]``), each under a name its code refers to;
* its line prefixes and shapes (``[prefixes]``, ``[[shapes]]``): the anchor, then each part of
  the line: literal text, a choice of texts, spaces, a number of a declared syntax filling a
  column named by its :class:`tui.core.model.columns.RecordColumns` name, a character run, a
  clock, a capture, a repeat, an optional group; a field may be written ``{before = "text",
  number = "int", column = "name"}``;
* how its records count in the statistics (``[statistics]``: the :class:`Format` flags);
* its ``/metrics`` names (``[metrics]``) and its release eras with their evidence (``[[eras]]``);
* its own definitions of the printed accept rate, with the words people read (``[rates]``).

The schema that checks a file is :mod:`tui.core.formats.family_schema` (pydantic): a third-party
family's file is checked when it loads, the bundled ones by the tests, so that a headless
command starts without pydantic. Here the same fields, with the same defaults, are plain frozen
dataclasses (``tests/unit/test_data_family.py`` holds the two equal).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.core.formats.shape_program import prefix_of, tokens_of
from tui.core.formats.shapes import Shape

FILE = "family.toml"


@dataclass(frozen=True)
class Part:
    """One part of a line shape (see :class:`tui.core.formats.family_schema.Part`)."""

    text: str | list[str] | None = None
    spaces: bool = False
    before: str | None = None
    pad: bool = False
    number: str | None = None
    column: str | None = None
    chars: str | None = None
    min: int = 1
    max: int | None = None
    lazy: bool = False
    clock: str | None = None
    format: str | None = None
    capture: str | None = None
    parts: list[Part] | None = None
    repeat: list[Part] | None = None
    optional: bool | list[Part] = False

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Part:
        d = dict(raw)
        for key in ("parts", "repeat"):
            if d.get(key) is not None:
                d[key] = [cls.of(p) for p in d[key]]
        if isinstance(d.get("optional"), list):
            d["optional"] = [cls.of(p) for p in d["optional"]]
        return cls(**d)


@dataclass(frozen=True)
class SumMatch:
    value: str
    items: str
    within: float
    per_item: float
    offsets: list[float]
    column: str

    def of(self, value: float, items: Sequence[float]) -> float:
        """A line's evidence under this declaration (:func:`sum_match`)."""
        return sum_match(value, items, self.within, self.per_item, self.offsets)


def sum_match(
    value: float, items: Sequence[float], within: float, per_item: float, offsets: Sequence[float]
) -> float:
    """A line's era evidence (a shape's ``sum_match``): the index of the first of ``offsets`` that
    ``value`` equals the sum of ``items`` plus, within ``within`` + ``per_item`` x their number;
    ``len(offsets)`` when none; NaN without items. The C scanner computes the same, summing in
    the same order (a plain loop: ``sum`` of floats compensates on newer Pythons)."""
    if not items or value != value:
        return math.nan
    total = 0.0
    for x in items:
        total += x
    tol = within + per_item * len(items)
    for j, off in enumerate(offsets):
        if abs(value - off - total) <= tol:
            return float(j)
    return float(len(offsets))


@dataclass(frozen=True)
class DraftsFromMean:
    """A derived drafts column checked against the printed mean (``1 + accepted / drafts``,
    printed to within ``within``): where a segment's lines break it, their drafts are
    ``accepted / (mean - 1)`` (stats/drafts.py)."""

    mean: str
    accepted: str
    drafts: str
    within: float


@dataclass(frozen=True)
class ShapeData:
    """A line shape: ``kind`` is the record kind it makes (or, with ``pairs_with``, a line whose
    columns go to the next record of that kind)."""

    kind: str
    anchor: str  # a name in [anchors]
    prefix: str  # a name in [prefixes]
    body: list[Part]  # after the anchor, to the end of the line
    lead: list[Part] = field(default_factory=list)  # between the prefix and the anchor
    rate: str | None = None  # "drafts": the printed rate is accepted / proposed drafts
    pairs_with: str | None = None
    # an era's evidence on each line: which of ``offsets`` the ``value`` column equals the sum of
    # its ``list`` plus (within ``within`` + ``per_item`` x the list's length), into ``column``
    sum_match: SumMatch | None = None
    # derived columns: name -> (column, list column): the column divided by the list's length
    per_list_item: dict[str, tuple[str, str]] = field(default_factory=dict)
    rank: str | None = None  # on a pairs_with shape: the record's rank, "engine {engine}"
    drafts_from_mean: DraftsFromMean | None = None

    @classmethod
    def of(cls, raw: dict[str, Any]) -> ShapeData:
        d = dict(raw)
        d["body"] = [Part.of(p) for p in d.get("body", [])]
        d["lead"] = [Part.of(p) for p in d.get("lead", [])]
        if d.get("sum_match") is not None:
            d["sum_match"] = SumMatch(**d["sum_match"])
        if d.get("drafts_from_mean") is not None:
            d["drafts_from_mean"] = DraftsFromMean(**d["drafts_from_mean"])
        d["per_list_item"] = {k: (v[0], v[1]) for k, v in d.get("per_list_item", {}).items()}
        return cls(**d)

    def shape(self, family: FamilyData) -> Shape:
        return Shape(
            family.name,
            self.kind,
            prefix_of(family.prefixes[self.prefix]),
            family.anchors[self.anchor],
            tokens_of(self.body),
            tokens_of(self.lead),
        )


@dataclass(frozen=True)
class Statistics:
    """How a family's records count (the :class:`tui.core.formats.plugin.Format` flags)."""

    elapsed_clock: bool = False
    speculative_config_args: bool = False
    num_steps_bound_depth: bool = True
    weight_by_running_req: bool = False
    drafts_from_depth: bool = True
    depth_from_records: bool = True
    collects_rate_pairs: bool = False
    rate_definition_cached: bool = False
    request_kinds: list[str] = field(default_factory=list)
    requests_name_family: bool = True


@dataclass(frozen=True)
class Metrics:
    """Its ``/metrics`` names (see :class:`tui.core.formats.family_schema.Metrics`)."""

    prefixes: list[str] = field(default_factory=list)
    looked_for: str = ""
    no_spec_note: str = ""
    json_moves_to: str | None = None
    json_is: str = ""
    default_for_records: bool = False


@dataclass(frozen=True)
class EraShift:
    column: str
    by: float


@dataclass(frozen=True)
class Era:
    name: str
    evidence: str
    since: str | None = None
    until: str | None = None
    # the index in its shape's ``sum_match.offsets`` that a line of this era shows (None: its
    # lines carry no such evidence)
    sum_match: int | None = None
    shift: EraShift | None = None  # what a printed value of this era lacks, to be on one scale
    note: str | None = None  # said in the segment's rate definition when the era is this one


@dataclass(frozen=True)
class FamilyData:
    name: str
    display: str
    order: int = 100  # lines are offered to families in this order (then by name)
    plugin: str | None = None  # "module:Class" in the family's package; None: declared lines only
    anchors: dict[str, str] = field(default_factory=dict)
    markers: dict[str, str] = field(default_factory=dict)
    records: list[str] | None = None  # the anchors whose lines make records (messages; None: all)
    prefixes: dict[str, list[Part]] = field(default_factory=dict)
    shapes: list[ShapeData] = field(default_factory=list)
    statistics: Statistics = field(default_factory=Statistics)
    metrics: Metrics = field(default_factory=Metrics)
    eras: list[Era] = field(default_factory=list)
    rates: dict[str, str] = field(default_factory=dict)  # its own rate definitions: id -> words

    @classmethod
    def of(cls, raw: dict[str, Any]) -> FamilyData:
        d = dict(raw)
        d["prefixes"] = {k: [Part.of(p) for p in v] for k, v in d.get("prefixes", {}).items()}
        d["shapes"] = [ShapeData.of(s) for s in d.get("shapes", [])]
        d["statistics"] = Statistics(**d.get("statistics", {}))
        d["metrics"] = Metrics(**d.get("metrics", {}))
        d["eras"] = [
            Era(
                **{
                    **e,
                    "shift": EraShift(e["shift"]["column"], float(e["shift"]["by"]))
                    if e.get("shift")
                    else None,
                }
            )
            for e in d.get("eras", [])
        ]
        return cls(**d)

    def shape_of(self, kind: str) -> Shape:
        for s in self.shapes:
            if s.kind == kind:
                return s.shape(self)
        raise KeyError(kind)

    def all_shapes(self) -> tuple[Shape, ...]:
        return tuple(s.shape(self) for s in self.shapes)


class FamilyDataError(ValueError):
    """A family folder whose data cannot be read (the message names the file and the place)."""


def check(raw: dict[str, Any], where: object, text: str | None = None) -> None:
    """Check ``raw`` against the schema (pydantic, imported only here). With ``text`` (the file
    ``raw`` was read from), a text already checked against this schema is not checked again
    (:func:`_checked_before`): a third-party family costs pydantic's import (~0.15 s) once, not
    at every start."""
    mark = _checked_before(text) if text is not None else None
    if mark is not None and mark.exists():
        return
    from tui.core.formats.family_schema import FamilyData as Schema

    try:
        Schema.model_validate(raw)
    except ValueError as exc:
        raise FamilyDataError(f"{where}: {exc}") from None
    if mark is not None:
        try:
            mark.parent.mkdir(parents=True, exist_ok=True)
            mark.touch()
        except OSError:  # a read-only home: checked again next time, nothing else changes
            pass


def _checked_before(text: str) -> Path | None:
    """The marker file saying that ``text`` passed the schema as it is now: named by the SHA-256
    of the schema's source and the text, under :func:`cache_dir`; None when nothing is kept."""
    import hashlib

    base = cache_dir()
    if base is None:
        return None
    try:
        schema = (Path(__file__).parent / "family_schema.py").read_bytes()
    except OSError:
        return None
    digest = hashlib.sha256(schema + b"\0" + text.encode("utf-8")).hexdigest()
    return base / "checked-families" / digest


def _parsed(f: Any) -> dict[str, Any]:
    """``tomllib.loads`` of the file ``f``, kept in the user cache (marshal, under the file's
    path, size and modification time) so that a start reads the bundled families without
    parsing TOML (~5 ms); the file itself when there is no cache or ``f`` is no plain path."""
    import marshal
    import os
    import tomllib
    import zlib

    base = cache_dir()
    if base is None or not isinstance(f, Path):
        return tomllib.loads(f.read_text(encoding="utf-8"))
    st = os.stat(f)
    key = (str(f), st.st_size, st.st_mtime_ns)
    kept = base / f"family-toml-{zlib.crc32(key[0].encode()):08x}"
    try:
        got_key, raw = marshal.loads(kept.read_bytes())
        if tuple(got_key) == key and isinstance(raw, dict):
            return raw
    except (OSError, ValueError, EOFError, TypeError):
        pass
    raw = tomllib.loads(f.read_text(encoding="utf-8"))
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        tmp = kept.with_name(f"{kept.name}.{os.getpid()}")
        tmp.write_bytes(marshal.dumps((key, raw)))
        os.replace(tmp, kept)
    except (OSError, ValueError):  # a read-only home, or a value marshal cannot write
        pass
    return raw


def cache_dir() -> Path | None:
    """Where what is found once is kept between starts (the checked family texts, the entry
    points found): ``$SPECWATCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/specwatch``, else
    ``~/.cache/specwatch``; None (nothing kept) when ``SPECWATCH_CACHE_DIR`` is empty."""
    import os

    base = os.environ.get("SPECWATCH_CACHE_DIR")
    if base == "":
        return None
    if base is None:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(xdg, "specwatch")
    return Path(base)


def load(folder: Path | Any, validate: bool = True) -> FamilyData:
    """The data of the family in ``folder`` (a path or an importlib.resources Traversable),
    checked against the schema unless ``validate`` is False (the bundled families: the tests
    check them)."""
    f = folder / FILE
    text = None
    try:
        if validate:
            import tomllib

            text = f.read_text(encoding="utf-8")
            raw: dict[str, Any] = tomllib.loads(text)
        else:
            raw = _parsed(f)
    except (OSError, ValueError, UnicodeDecodeError) as exc:  # (TOMLDecodeError is a ValueError)
        raise FamilyDataError(f"{f}: {exc}") from None
    if text is not None:
        check(raw, f, text)
    try:
        return FamilyData.of(raw)
    except (TypeError, KeyError, ValueError, IndexError) as exc:  # only when not validated
        raise FamilyDataError(f"{f}: {exc}") from None
