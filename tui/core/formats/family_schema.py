"""The schema of a family's data (``family.toml``): pydantic models that check every file a
reader may write (docs/formats.md, "The data of a family"), every mistake said with its place
(``family.toml: shapes.0.body.0.number: Input should be 'int', ...``).

The files of a third-party family are checked when they load; the bundled ones by the tests
(``tests/unit/test_data_family.py``), so that ``summary`` starts without pydantic: at run time
:mod:`tui.core.formats.family_data` reads the same fields, with the same defaults, into plain
dataclasses (a test holds the two equal).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tui.core.formats.shape_program import CHAR_CLASS

FILE = "family.toml"
Number = Literal["int", "float", "percent", "list"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# clock directives of a ``clock`` part's format: fixed digits, or (N) one or more; %f is an
# optional fraction of a second (".", 1 to 6 digits)
CLOCK_DIRECTIVES = {"Y": 4, "m": 2, "d": 2, "H": 2, "M": 2, "S": 2, "L": 3, "U": 3, "N": 0, "f": -1}
CLOCKS = {
    # a date and time: the record's timestamp (seconds of the printed fields, as if UTC)
    "date": {"Y", "m", "d", "H", "M", "S"},
    # no year: the scanner is given one and the family's plug-in settles it (Format.settle_scan)
    "yearless": {"m", "d", "H", "M", "S"},
    # time since the server started (minutes N, seconds S, ms L, us U): the record's elapsed
    "elapsed": {"N", "S", "L", "U"},
}


class Part(_Strict):
    """One part of a line shape, exactly one of:

    * ``text``: literal text, or a list of texts (one of them);
    * ``spaces``: any number of spaces;
    * ``number``: a value of that syntax (after the optional ``before`` text and ``pad``
      spaces), filling ``column`` if given;
    * ``chars``: a run of a character class (:data:`tui.core.formats.shape_program.CHAR_CLASS`), ``min`` to ``max`` long;
      ``lazy``: as short as the text part right after it allows;
    * ``clock``: a time stamp of that kind (:data:`CLOCKS`) in ``format`` (``%Y-%m-%d %H:%M:%S``);
    * ``capture``: the text its ``parts`` span, by name: ``rank`` (the record's rank, spaces
      stripped) or ``process`` (the process tag: the same on every line a buffer reads fast; a
      line pairs only with a line of its process);
    * ``repeat``: its parts zero or more times;
    * ``optional = [parts]``: a group of parts, all or nothing.

    ``optional = true`` on a text or number part makes that part (with its ``before``) optional."""

    text: str | list[str] | None = None
    spaces: bool = False
    before: str | None = None
    pad: bool = False  # spaces allowed between ``before`` and the number (llama.cpp pads)
    number: Number | None = None
    column: str | None = None
    chars: str | None = None
    min: int = Field(default=1, ge=0)
    max: int | None = Field(default=None, ge=1)
    lazy: bool = False
    clock: str | None = None
    format: str | None = None
    capture: Literal["rank", "process"] | None = None
    parts: list[Part] | None = None
    repeat: list[Part] | None = None
    optional: bool | list[Part] = False

    @model_validator(mode="after")
    def _one_kind(self) -> Part:
        kinds = [
            self.text is not None,
            self.spaces,
            self.number is not None,
            self.chars is not None,
            self.clock is not None,
            self.capture is not None,
            self.repeat is not None,
            isinstance(self.optional, list),
        ]
        if sum(kinds) != 1:
            raise ValueError(
                "a part is one of: text, spaces, number, chars, clock, capture, repeat, optional = [parts]"
            )
        if self.column is not None and self.number is None:
            raise ValueError("only a number fills a column")
        if (self.before is not None or self.pad) and self.number is None:
            raise ValueError("'before' and 'pad' go with a number")
        if isinstance(self.text, list) and not self.text:
            raise ValueError("a choice of texts needs at least one")
        if self.chars is not None and self.chars not in CHAR_CLASS:
            raise ValueError(f"chars: one of {sorted(CHAR_CLASS)}")
        if self.clock is not None:
            if self.clock not in CLOCKS:
                raise ValueError(f"clock: one of {sorted(CLOCKS)}")
            used = set(_directives(self.format or ""))
            if not CLOCKS[self.clock] <= used or used - CLOCKS[self.clock] - {"f"}:
                raise ValueError(
                    f"clock {self.clock}: format needs exactly %{' %'.join(sorted(CLOCKS[self.clock]))}"
                )
        if (self.capture is not None) != (self.parts is not None):
            raise ValueError("a capture has parts, and only a capture")
        if (self.optional is True) and self.text is None and self.number is None:
            raise ValueError("optional = true goes with a text or a number")
        return self


def _directives(fmt: str) -> list[str]:
    out = []
    i = 0
    while i < len(fmt):
        if fmt[i] == "%":
            if i + 1 >= len(fmt) or fmt[i + 1] not in CLOCK_DIRECTIVES:
                raise ValueError(
                    f"clock format {fmt!r}: %{fmt[i + 1 : i + 2]} is not one of {sorted(CLOCK_DIRECTIVES)}"
                )
            out.append(fmt[i + 1])
            i += 2
        else:
            i += 1
    return out


class ShapeData(_Strict):
    """A line shape: ``kind`` is the record kind it makes (or a kind its family's code pairs
    with a record, such as vLLM's ``engine`` line)."""

    kind: str
    anchor: str  # a name in [anchors]
    prefix: str  # a name in [prefixes]
    lead: list[Part] = []  # between the prefix and the anchor
    body: list[Part]  # after the anchor, to the end of the line
    # what its records' printed accept rate is: "drafts" = accepted / proposed drafts
    rate: Literal["drafts"] | None = None
    # a line of this shape makes no record: its columns go to the next record of that kind
    # (of the same process) — vLLM's engine line before its spec line
    pairs_with: str | None = None

    # an era's evidence on each line, into ``column``: the index of the first of ``offsets`` that
    # the ``value`` column equals the sum of the ``items`` column plus, within ``within`` +
    # ``per_item`` x the list's length (the number of offsets when none; not there without a list)
    sum_match: SumMatch | None = None
    # derived columns: name -> (column, list column): the column divided by the list's length
    per_list_item: dict[str, tuple[str, str]] = {}
    rank: str | None = None  # on a pairs_with shape: the record's rank, "engine {engine}"
    # a derived drafts column (per_list_item) checked against the printed mean 1 + accepted /
    # drafts: where a segment's lines break it (draft lengths that vary), accepted / (mean - 1)
    drafts_from_mean: DraftsFromMean | None = None


class DraftsFromMean(_Strict):
    mean: str
    accepted: str
    drafts: str
    within: float = Field(gt=0)


class SumMatch(_Strict):
    value: str
    items: str
    within: float
    per_item: float
    offsets: list[float] = Field(min_length=1, max_length=4)
    column: str


class Statistics(_Strict):
    """How a family's records count (the :class:`tui.core.formats.plugin.Format` flags of the
    same names; see there)."""

    elapsed_clock: bool = False
    speculative_config_args: bool = False
    num_steps_bound_depth: bool = True
    weight_by_running_req: bool = False
    drafts_from_depth: bool = True
    depth_from_records: bool = True
    collects_rate_pairs: bool = False
    rate_definition_cached: bool = False
    request_kinds: list[str] = []
    requests_name_family: bool = True


class Metrics(_Strict):
    """Its ``/metrics`` names: the prefixes they start with, the names that make a record (for
    messages), the note said when they are there without spec-decode ones, and the path its
    server moves them to when the default path answers JSON."""

    prefixes: list[str] = []
    looked_for: str = ""
    no_spec_note: str = ""
    json_moves_to: str | None = None
    json_is: str = ""  # what that JSON answer is, for the message ("trtllm-serve's iteration stats")
    default_for_records: bool = False  # a metrics record with no family is this family's


class EraShift(_Strict):
    column: str
    by: float


class Era(_Strict):
    """A release era and the evidence that tells a log is of it."""

    name: str
    since: str | None = None  # the release (or date) it began
    until: str | None = None
    evidence: str  # what on a line or in the config shows it (words; the code that reads it says where)
    # the index in its shape's sum_match offsets that this era's lines show
    sum_match: int | None = Field(default=None, ge=0)
    shift: EraShift | None = None  # what a printed value of this era lacks, to be on one scale
    note: str | None = None  # said in the rate definition of a segment of this era


class FamilyData(_Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    display: str
    order: int = 100  # lines are offered to families in this order (then by name)
    plugin: str | None = None  # "module:Class" in the family's package; None: declared lines only
    anchors: dict[str, str] = {}  # name -> a text the family's metric lines are found by
    markers: dict[str, str] = {}  # name -> a text of a startup marker
    records: list[str] | None = None  # the anchors whose lines make records (messages; None: all)
    prefixes: dict[str, list[Part]] = {}  # name -> the parts a line starts with, up to the lead
    shapes: list[ShapeData] = []
    statistics: Statistics = Statistics()
    metrics: Metrics = Metrics()
    eras: list[Era] = []
    # the rate definitions its lines may state beyond accepted/proposed drafts: id -> the words
    # people read for it (tui.core.formats.rate_definition.words)
    rates: dict[str, str] = {}

    @field_validator("anchors", "markers")
    @classmethod
    def _long_enough(cls, v: dict[str, str]) -> dict[str, str]:
        for name, text in v.items():
            if len(text.encode()) < 3:
                raise ValueError(f"{name}: an anchor is at least 3 bytes (the scanners' skip loop)")
        return v

    @model_validator(mode="after")
    def _names_known(self) -> FamilyData:
        for i, s in enumerate(self.shapes):
            if s.anchor not in self.anchors:
                raise ValueError(f"shapes -> {i}: anchor {s.anchor!r} is not in [anchors]")
            if s.prefix not in self.prefixes:
                raise ValueError(f"shapes -> {i}: prefix {s.prefix!r} is not in [prefixes]")
        for name in self.records or ():
            if name not in self.anchors:
                raise ValueError(f"records: {name!r} is not in [anchors]")
        return self


Part.model_rebuild()
ShapeData.model_rebuild()
