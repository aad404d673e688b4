"""The grammar of every format, put together from the families' data (see docs/formats.md).

Each family declares its part in its folder's ``family.toml`` (:mod:`.family_data`); the
families are found by :mod:`.families`. This module names no family:

* :data:`ANCHORS`: every literal text the line parser acts on. A line containing none of them
  (after the markdown / ANSI cleaning of :func:`tui.core.formats.text.clean`) yields nothing;
  the line parser skips it with one substring test per anchor, the scanners skip it at
  ``memchr`` speed. Nothing else keeps a list of "texts that matter". The anchors of the
  declared shapes come first (:data:`SHAPES`, in order), then the families' other anchors, then
  their marker texts and the markers of no family (:data:`UVICORN_START`).
* :data:`SHAPES`: the line shapes the whole-buffer scanners read in bulk, as token sequences
  (literal text, typed fields, optional groups; :mod:`.shapes`), in family order. The Python
  scanner's regular expressions are compiled from them (:func:`regex`). A line that carries an
  anchor but fits no shape sends its buffer to the line parser.
"""

from __future__ import annotations

from tui.core.formats.families import FAMILIES
from tui.core.formats.shapes import (  # noqa: F401  (the grammar's vocabulary, re-exported)
    BOOL,
    FLOAT,
    INT,
    PERCENT,
    Field,
    Lit,
    OneOf,
    Opt,
    Shape,
    Spaces,
    Token,
    regex,
)

UVICORN_START = "Started server process"  # uvicorn, before any server's own lines

SHAPES: tuple[Shape, ...] = tuple(s for f in FAMILIES for s in f.data.all_shapes())
SHAPED_ANCHORS: tuple[str, ...] = tuple(dict.fromkeys(s.anchor for s in SHAPES))


def _unique(texts: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(texts))


METRIC_ANCHORS: tuple[str, ...] = _unique(
    [*SHAPED_ANCHORS, *(a for f in FAMILIES for a in f.data.anchors.values())]
)
MARKER_ANCHORS: tuple[str, ...] = tuple(
    a
    for a in _unique([*(m for f in FAMILIES for m in f.data.markers.values()), UVICORN_START])
    if a not in METRIC_ANCHORS
)
ANCHORS: tuple[str, ...] = METRIC_ANCHORS + MARKER_ANCHORS
# Anchors of the families registered at run time (registry.register): no scanner reads their
# lines, so a buffer holding one goes to the line parser.
EXTRA_ANCHORS: list[str] = []


def extra_line(buf: bytes | memoryview) -> int:
    """The start of the first line of ``buf`` holding one of :data:`EXTRA_ANCHORS`, -1 when none
    does (the scanners leave such a buffer, or from that line on, to the line parser)."""
    data = bytes(buf)
    found = [i for a in EXTRA_ANCHORS if (i := data.find(a.encode())) >= 0]
    return data.rfind(b"\n", 0, min(found)) + 1 if found else -1


# Bytes that :func:`tui.core.formats.text.clean` removes or rewrites: a line holding one may
# hold an anchor only once cleaned, so the line parser cleans it before looking.
CLEANED = ("\x1b", "\x00", "`", "**", "\ufffd[")
