"""Every quantity specwatch carries, defined once.

A :class:`Quantity` says what a number is (its name: the :class:`~tui.core.model.records.Record`
field and the :class:`~tui.core.model.columns.RecordColumns` column), its unit, the range a
printed value must fall in to be believed (``valid``; :mod:`tui.core.stats.checks` refuses the
rest), how values of many records are combined (:class:`Combine`), the words people read (label,
short label, help), its CSV column, its Prometheus series name, and which outputs show it.

What is derived from this registry instead of being written again:

* the column layout (:func:`column_names`): the columns every reader builds, in one order — the
  scanners look each column's index up by name, the native reduction gets the layout at load time
  (:func:`checked`), so nothing holds a positional list of its own;
* the checks' ranges and words (``checks.ranges()``, ``checks.words()``);
* the renderers' labels and the CSV and Prometheus names.

No entry names a family (the families say what they print). A family (or a test) adds a
quantity of its own with :func:`register`: it joins the end of the layout, so the columns already numbered
keep their places; :func:`register_field` says which family's lines print it and where
(:class:`FamilyField`). Every output then shows it where its ``outputs`` say: summary's text,
Markdown and JSON (``more``), the app's numbers, the exporter (its ``prometheus`` name) and the CSV.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum

MAX_DEPTH = 64  # no server drafts more tokens per step: accept len is at most MAX_DEPTH + 1
BIG = float(2**53)  # counts, rates of tokens and batch sizes: exact as doubles, no sum overflows


class Combine(StrEnum):
    """How the values of many records become one figure."""

    MEAN = "mean"  # the mean of the printed values (n, CI, weighted mean): a series
    POOLED = "pooled"  # counts summed over the records (Σaccepted / Σdrafted and the like)
    LAST = "last"  # running totals since the server started: the last printed value
    SPAN = "span"  # first and last (time)
    NONE = "none"  # carried with the record, not combined


class Output(StrEnum):
    """Where a quantity can be shown."""

    TEXT = "text"  # summary's text
    MARKDOWN = "markdown"  # summary --format markdown
    JSON = "json"  # summary --json (and stream --jsonl records)
    APP = "app"  # the app's panes
    EXPORT = "export"  # the exporter's /metrics
    CSV = "csv"  # the app's records CSV


ALL_OUTPUTS = frozenset(Output)


@dataclass(frozen=True, slots=True)
class Quantity:
    """One quantity. ``valid``: the range a value must lie in (None: carried unchecked);
    ``depth_bound``: the upper end is k + 1 where the draft depth k is known (accept len).
    ``digits``: decimals people are shown. Which family prints a quantity is the family's to say
    (its parser fills a built-in one; :func:`register_field` declares an added one)."""

    name: str
    unit: str
    label: str
    short: str
    help: str
    combine: Combine
    valid: tuple[float, float] | None = None
    depth_bound: bool = False
    digits: int = 2
    csv: str | None = None
    prometheus: str | None = None
    outputs: frozenset[Output] = field(default=frozenset({Output.JSON}))

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name.startswith("_"):
            raise ValueError(f"a quantity's name is an identifier: {self.name!r}")
        if self.valid is not None and not self.valid[0] <= self.valid[1]:
            raise ValueError(f"{self.name}: valid range {self.valid} is empty")
        if self.csv is not None and Output.CSV not in self.outputs:
            raise ValueError(f"{self.name}: a CSV column but not shown in the CSV")
        if self.prometheus is not None and not self.prometheus.startswith("specwatch_"):
            raise ValueError(f"{self.name}: Prometheus names start with specwatch_")

    def shown_in(self, output: Output) -> bool:
        return output in self.outputs


_REGISTRY: dict[str, Quantity] = {}
_BUILT_IN: frozenset[str] = frozenset()  # set once the built-in quantities are registered (below)


def register(q: Quantity) -> Quantity:
    """Add ``q`` at the end of the layout (a family's own quantity, or a test's). A name is
    registered once; registering the same definition again is a no-op (a module imported twice)."""
    old = _REGISTRY.get(q.name)
    if old is not None:
        if old == q:
            return old
        raise ValueError(f"a quantity named {q.name!r} is registered already")
    _REGISTRY[q.name] = q
    _note_added()
    return q


def unregister(name: str) -> None:
    """Remove a quantity added by :func:`register` (tests), with its families' fields; the
    built-in ones stay."""
    if name in _BUILT_IN:
        raise ValueError(f"{name!r} is built in")
    del _REGISTRY[name]
    for key in [k for k in _FIELDS if k[1] == name]:
        del _FIELDS[key]
    _note_added()


def get(name: str) -> Quantity:
    return _REGISTRY[name]


def find(name: str) -> Quantity | None:
    return _REGISTRY.get(name)


def all_quantities() -> Iterator[Quantity]:
    """Every quantity, in the order of the column layout."""
    return iter(tuple(_REGISTRY.values()))


def column_names() -> tuple[str, ...]:
    """The column layout: every quantity's column, in registration order (appended ones last)."""
    return tuple(_REGISTRY)


def checked() -> tuple[Quantity, ...]:
    """The quantities the checks bound (``valid`` set), in layout order."""
    return tuple(q for q in _REGISTRY.values() if q.valid is not None)


def shown_in(output: Output) -> tuple[Quantity, ...]:
    return tuple(q for q in _REGISTRY.values() if output in q.outputs)


def added() -> tuple[Quantity, ...]:
    """The quantities registered after the built-in ones (a family's or a test's): the renderers
    show them generically, where the built-in ones have rows of their own. (Asked per record by
    the app: kept, not recomputed.)"""
    return _added[0]


def _note_added() -> None:
    _added[0] = tuple(q for q in _REGISTRY.values() if q.name not in _BUILT_IN)


_added: list[tuple[Quantity, ...]] = [()]


def label(name: str) -> str:
    """The words for a quantity (its name when it is not registered)."""
    q = _REGISTRY.get(name)
    return q.label if q is not None else name


@dataclass(frozen=True, slots=True)
class FamilyField:
    """A family's line that prints a quantity: the text before the number on the family's metric
    lines (``"draft latency: "``), read as a decimal number (``3.2``, ``1e-3``, ``nan``). A family
    (or a test) declares it with :func:`register_field`; the value lands in the record's
    :attr:`~tui.core.model.records.Record.more` when asked for (:meth:`Record.value`)."""

    family: str
    quantity: str
    before: str
    kind: str | None = None  # only records of this kind (None: any of the family's)

    def read(self, text: str) -> float | None:
        at = text.find(self.before)
        if at < 0:
            return None
        m = _NUMBER.match(text, at + len(self.before))
        return float(m.group()) if m else None


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|nan|inf)", re.IGNORECASE)
_FIELDS: dict[tuple[str, str], FamilyField] = {}  # (family, quantity) -> its field


def register_field(f: FamilyField) -> FamilyField:
    """Declare that ``f.family`` prints quantity ``f.quantity`` (registered already)."""
    if f.quantity not in _REGISTRY:
        raise ValueError(f"no quantity named {f.quantity!r}: register it first")
    if f.quantity in _BUILT_IN:
        raise ValueError(f"{f.quantity!r} is a built-in field: its family's parser reads it")
    _FIELDS[(f.family, f.quantity)] = f
    return f


def unregister_field(family: str, quantity: str) -> None:
    del _FIELDS[(family, quantity)]


def field_of(family: str, quantity: str) -> FamilyField | None:
    return _FIELDS.get((family, quantity))


def fields_of(family: str) -> tuple[FamilyField, ...]:
    return tuple(f for (fam, _), f in _FIELDS.items() if fam == family)


_SHOWN = ALL_OUTPUTS
_RATE = (0.0, 1.0)
_LEN = (1.0, MAX_DEPTH + 1.0)
_COUNT = (0.0, BIG)

# The built-in quantities, in the order of the column layout the scanners were written for.
for _q in (
    Quantity(
        "timestamp",
        "s",
        "timestamp",
        "time",
        "the line's wall-clock time (seconds of the printed local time, no zone)",
        Combine.SPAN,
        valid=(-BIG, BIG),
        csv="timestamp",
        outputs=frozenset({Output.JSON, Output.APP, Output.CSV}),
    ),
    Quantity(
        "accept_len",
        "tokens/step",
        "accept len",
        "AL",
        "tokens emitted per verify step (1 + accepted drafts), as printed",
        Combine.MEAN,
        valid=_LEN,
        depth_bound=True,
        csv="accept_len",
        prometheus="specwatch_accept_len",  # _{mean,window_mean,last,...}, _pooled
        outputs=_SHOWN,
    ),
    Quantity(
        "accept_rate",
        "fraction",
        "accept rate",
        "AR",
        "the accept rate as printed (its definition is the segment's rate definition)",
        Combine.MEAN,
        valid=_RATE,
        digits=3,
        csv="accept_rate",
        prometheus="specwatch_accept_rate",  # _printed_*, _normalized_*, _pooled
        outputs=_SHOWN,
    ),
    Quantity(
        "accepted",
        "tokens",
        "accepted tokens",
        "acc",
        "accepted draft tokens counted by the records (no bonus token)",
        Combine.POOLED,
        valid=_COUNT,
        prometheus="specwatch_accepted_tokens",
        outputs=frozenset({Output.TEXT, Output.MARKDOWN, Output.JSON, Output.APP, Output.EXPORT}),
    ),
    Quantity(
        "drafted",
        "tokens",
        "drafted tokens",
        "drafted",
        "drafted tokens counted by the records",
        Combine.POOLED,
        valid=_COUNT,
        prometheus="specwatch_drafted_tokens",
        outputs=frozenset({Output.TEXT, Output.MARKDOWN, Output.JSON, Output.APP, Output.EXPORT}),
    ),
    Quantity(
        "num_drafts",
        "drafts",
        "drafts",
        "drafts",
        "verify steps x requests in the interval, where derivable",
        Combine.POOLED,
        valid=_COUNT,
        outputs=frozenset({Output.TEXT, Output.MARKDOWN, Output.JSON}),
    ),
    Quantity(
        "running_req",
        "requests",
        "#running-req",
        "run",
        "requests in the running batch",
        Combine.MEAN,
        valid=_COUNT,
        digits=1,
        csv="running_req",
        outputs=frozenset({Output.TEXT, Output.MARKDOWN, Output.JSON, Output.APP, Output.CSV}),
    ),
    Quantity(
        "tokens",
        "tokens",
        "#token",
        "tok",
        "tokens in the KV cache, as printed",
        Combine.NONE,
    ),
    Quantity(
        "token_usage",
        "fraction",
        "token usage",
        "usage",
        "KV cache usage, as printed",
        Combine.NONE,
    ),
    Quantity(
        "throughput",
        "tokens/s",
        "throughput",
        "tok/s",
        "generation throughput, tokens/s, as printed",
        Combine.MEAN,
        valid=_COUNT,
        digits=0,
        csv="throughput",
        outputs=frozenset({Output.JSON, Output.APP, Output.CSV}),
    ),
    Quantity(
        "queue_req",
        "requests",
        "#queue-req",
        "queue",
        "requests waiting in the queue, as printed",
        Combine.NONE,
    ),
    Quantity(
        "accept_len_derived",
        "tokens/step",
        "accept len (derived)",
        "AL*",
        "accept len of the interval derived from running counters: 1 + Δaccepted / Δdrafts",
        Combine.MEAN,
        valid=_LEN,
        depth_bound=True,
        outputs=frozenset({Output.TEXT, Output.MARKDOWN, Output.JSON, Output.APP}),
    ),
    Quantity(
        "accept_rate_derived",
        "fraction",
        "accept rate (derived)",
        "AR*",
        "accept rate of the interval derived from running counters: Δaccepted / Δdrafted",
        Combine.MEAN,
        valid=_RATE,
        digits=3,
        outputs=frozenset({Output.JSON}),
    ),
    Quantity(
        "elapsed",
        "s",
        "elapsed",
        "elapsed",
        "seconds since the server started (the line's prefix), not a date",
        Combine.SPAN,
        outputs=frozenset({Output.TEXT, Output.JSON}),
    ),
    Quantity(
        "system_efficiency",
        "fraction",
        "system efficiency",
        "eff",
        "emitted / (verify steps x (k+1)) since the server started, as the last line printed it",
        Combine.LAST,
        digits=3,
        outputs=frozenset({Output.JSON}),
    ),
    # a line's evidence of its release era, carried to the statistics and shown nowhere: which of
    # the offsets its shape declares (``sum_match``) the value equals its list's sum plus
    Quantity(
        "sum_match",
        "index",
        "era evidence",
        "era",
        "the index of the declared offset by which the line's value exceeds the sum of its list",
        Combine.NONE,
        outputs=frozenset(),
    ),
):
    register(_q)

_BUILT_IN = frozenset(_REGISTRY)

# Quantities only some servers print, registered as a family's own would be (after the built-in
# ones: every output shows them generically, each family's shapes and parser say where its
# lines print them). No entry names a family: docs/formats.md says who prints what.
for _q in (
    Quantity(
        "cap_len",
        "tokens/step",
        "cap len",
        "cap",
        "the verify window the server scheduled per verify step (bonus slot included), as printed",
        Combine.MEAN,
        valid=_LEN,
        csv="cap_len",
        prometheus="specwatch_cap_len",
        outputs=_SHOWN,
    ),
    Quantity(
        "block_accept_len",
        "tokens/step",
        "block accept len",
        "blockAL",
        "accept len of the whole draft block per verify step, uncapped (accepted + cap-trimmed), as printed",
        Combine.MEAN,
        valid=_LEN,
        csv="block_accept_len",
        prometheus="specwatch_block_accept_len",
        outputs=_SHOWN,
    ),
):
    register(_q)
_note_added()
