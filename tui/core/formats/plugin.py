"""The one interface of a server family: a :class:`Format` plug-in.

Each family's package (``tui/core/formats/<family>/``) defines one subclass and is the only place
that knows the family: its lines (``parse``, with the anchors they are found by), its startup
markers and server args, its ``/metrics`` names (``metrics``), its accept-rate definitions
(``rate_definition``) and how its records count in the statistics (the class attributes below).
The registry (:mod:`tui.core.formats.registry`) lists the plug-ins; the parser, the statistics
and the sources ask the plug-in of a record's family, never compare the family's name.

A hook a family does not override keeps the behaviour written here: its records are counted by
their counts (accepted / drafted tokens, drafts), and its printed rate's definition is unknown
unless the config gives the drafts per step (:class:`PrintedRate`: as the records state it).
:data:`HOOKS` names every hook (the plug-in tests check each family provides them all).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from tui.core.formats.fleet_names import FleetNames
from tui.core.formats.rate_definition import RateDefinition

if TYPE_CHECKING:
    from tui.core.formats.family_data import FamilyData, SumMatch
    from tui.core.formats.server_config import ServerConfig
    from tui.core.formats.timestamps import TimestampReader
    from tui.core.model.columns import RecordColumns
    from tui.core.model.records import Item
    from tui.core.sources.prom.counters import Scrape

NOT_MINE: Any = object()  # what ``parse`` returns for a line that is not its family's


@dataclass(slots=True)
class Line:
    """A line as a plug-in's parser gets it."""

    source: str
    line_no: int
    offset: int
    text: str  # cleaned (tui.core.formats.text.clean)
    raw: str  # as read
    clock: TimestampReader  # the source's timestamp reader (year-less stamps, elapsed times)


@dataclass(slots=True)
class RateEvidence:
    """What a segment has seen that tells how its printed accept rates are defined."""

    printed: str | None  # the definition as the records state it
    config: ServerConfig
    k: int | None  # the draft depth read off the records
    pairs: list[tuple[float, float]]  # (accept len, rate) samples, when collects_rate_pairs
    first_ts: float | None  # the first record's time (a build cannot be newer than its log)


# (kind, family, config, version) of a startup / restart marker
Found = tuple[str, "str | None", dict[str, Any], "str | None"]


class MetricsReader:
    """One family's part of a ``/metrics`` scrape (state kept between scrapes)."""

    def feed(self, samples: list[tuple[str, dict, float, str]], scrape: Scrape) -> None:
        raise NotImplementedError


class Format:
    """A server family. Its data (``family.toml``: :class:`FamilyData`) gives the attributes below;
    a subclass (the family's ``plugin``) overrides only what its family does in code."""

    name: str = ""  # the family as records carry it
    display: str = ""  # as people write it (messages only)
    data: FamilyData | None = None  # what its folder declares (None: the generic family)
    # -- lines --
    anchors: tuple[str, ...] = ()  # the texts its lines are found by (the grammar's)
    marker_anchors: tuple[str, ...] = ()  # the texts of its startup markers
    # marker kind -> (the text its args dump starts at, "" for the whole line; the dump's reader)
    # for a dump that may be hard-wrapped over the next lines
    wrapped_markers: ClassVar[Mapping[str, tuple[str, Callable[[str], dict[str, Any]]]]] = {}
    ends_wrapped_args: ClassVar[tuple[str, ...]] = ()  # a line holding one ends a wrapped dump
    elapsed_clock: bool = False  # lines without a stamp carry time since server start
    # -- server config --
    speculative_config_args: bool = False  # args carry a speculative_config dict
    num_steps_bound_depth: bool = True  # a configured num_steps bounds accept len
    # the draft's config.json key of the EAGLE-3 aux layer ids, and what is used without it
    aux_layer_ids: ClassVar[tuple[tuple[str, ...], str] | None] = None
    # -- statistics --
    weight_by_running_req: bool = False  # lines weighted by #running-req, not by counts
    drafts_from_depth: bool = True  # a line's missing drafts = drafted tokens / k
    depth_from_records: bool = True  # a fixed k: the per-position list's length
    collects_rate_pairs: bool = False  # keeps (accept len, rate) pairs for rate_definition
    rate_definition_cached: bool = False  # rate_definition depends on config and pairs only
    request_kinds: frozenset[str] = frozenset()  # record kinds that are also requests
    # a segment whose requests come first takes their family (Ollama's never did: kept so)
    requests_name_family: bool = True
    # -- /metrics --
    metric_prefixes: tuple[str, ...] = ()  # its metric names start with one of these
    no_spec_note: str = ""  # said when its metrics are there without spec-decode ones
    looked_for: str = ""  # the metric names that make a record, for messages
    metrics_moved_to: str | None = None  # where its server serves /metrics when the default answers JSON
    default_for_metric_records: bool = False  # a metrics record with no family is this family's
    sum_matches: dict[str, SumMatch] = {}

    def __init__(self, data: FamilyData | None = None) -> None:
        if data is None:
            return
        self.data = data
        self.name, self.display = data.name, data.display
        self.anchors = tuple(data.anchors.values())
        self.marker_anchors = tuple(data.markers.values())
        st = data.statistics
        self.elapsed_clock = st.elapsed_clock
        self.speculative_config_args = st.speculative_config_args
        self.num_steps_bound_depth = st.num_steps_bound_depth
        self.weight_by_running_req = st.weight_by_running_req
        self.drafts_from_depth = st.drafts_from_depth
        self.depth_from_records = st.depth_from_records
        self.collects_rate_pairs = st.collects_rate_pairs
        self.rate_definition_cached = st.rate_definition_cached
        self.request_kinds = frozenset(st.request_kinds)
        self.requests_name_family = st.requests_name_family
        m = data.metrics
        self.metric_prefixes = tuple(m.prefixes)
        self.no_spec_note, self.looked_for = m.no_spec_note, m.looked_for
        self.metrics_moved_to = m.json_moves_to
        self.default_for_metric_records = m.default_for_records
        self.sum_matches = {sd.kind: sd.sum_match for sd in data.shapes if sd.sum_match is not None}

    # -- lines ---------------------------------------------------------------------------------
    def new_state(self) -> Any:
        """What its lines need from earlier lines, per source (``reset()`` forgets it)."""
        return None

    def reset(self, state: Any) -> None:
        if state is not None:
            state.reset()

    def restarted(self, state: Any) -> None:
        """A startup marker was read (any family's): cumulative counters start again from zero."""

    def busy(self, state: Any) -> bool:
        """True while a multi-line block is open: every next line goes to :meth:`block_line`."""
        return False

    def block_line(self, state: Any, source: str, line: str) -> tuple[bool, Item | None]:
        """(done, item) for the next line of an open block."""
        return True, None

    def parse(self, state: Any, line: Line) -> Any:
        """The item of a line holding one of the anchors (None: nothing to say); :data:`NOT_MINE`
        when the line is not this family's (the next plug-in is asked)."""
        return NOT_MINE

    def scanned(self, state: Any, runs: list[RecordColumns]) -> None:
        """A scanned buffer of this family's lines was folded (the line parser never saw them):
        bring ``state`` to where parsing them would have left it, for the lines read after them
        by the line parser. ``runs``: the buffer's runs of records, in line order. Nothing by
        default (the scanned lines move no state)."""

    def settle_scan(
        self, state: Any, clock: TimestampReader, edge: Any, head: Any, has_records: bool, source: str
    ) -> bool | None:
        """A scanned buffer of this family's lines, folded in line order: settle what its records
        need from the lines before it (``edge``: :class:`tui.core.formats.scan_shapes.Edge`; ``head``:
        the first record's columns when it may pair with a line before the buffer) against this
        source's ``state`` and ``clock``, as the line parser would have. False: the buffer must be
        read line by line; None: its records get no timestamp (no year known); True: settled."""
        return True

    def marker(self, text: str) -> Found | None:
        """A startup marker known by a text of its own."""
        return None

    def loose_marker(self, text: str) -> Found | None:
        """A marker known only by its look (a fragment of a dump): asked after every ``marker``."""
        return None

    # -- statistics ----------------------------------------------------------------------------
    def rate_definition(self, seen: RateEvidence) -> RateDefinition:
        """How the printed accept rates of a segment are defined, from what was seen of it."""
        ndt = seen.config.effective_num_draft_tokens
        if ndt is not None and ndt > 1:
            return RateDefinition(None, ndt - 1, "config (no accept rate printed)")
        return RateDefinition(None, None, "unknown (no config, no usable rate)", 0, 0)

    # -- /metrics ------------------------------------------------------------------------------
    def metrics(self) -> MetricsReader | None:
        """A reader of its ``/metrics`` names (None: the family exposes none that specwatch reads)."""
        return None

    def fleet(self) -> FleetNames | None:
        """Its spec-decode series for the fleet view over Prometheus (None: it exports none)."""
        return None


class PrintedRate(Format):
    """A family whose records state how their accept rate is defined (counts-based servers)."""

    # the summary's "how_known" of such a rate (one wording for all of them, as it always was):
    # "as the server defines it (vLLM / llama.cpp / TensorRT-LLM)", the families named by the
    # registry once it has made them (registry.py)
    printed_rate_source: ClassVar[str] = "as the server defines it"

    def rate_definition(self, seen: RateEvidence) -> RateDefinition:
        rd = RateDefinition(seen.printed, seen.config.drafts_per_step, self.printed_rate_source)
        if rd.drafts_per_step is None and self.depth_from_records:
            rd.drafts_per_step = seen.k  # the per-position list's length, or drafted / drafts
        return rd


HOOKS = tuple(
    name
    for name, value in vars(Format).items()
    if not name.startswith("_") and (callable(value) or name in Format.__annotations__)
)
