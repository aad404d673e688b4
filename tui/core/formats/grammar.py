"""The grammar of every format, declared once (see docs/formats.md).

* :data:`ANCHORS`: every literal text the line parser acts on. A line containing none of them
  (after the markdown / ANSI cleaning of :func:`tui.core.formats.text.clean`) yields nothing;
  the line parser skips it with one substring test per anchor, the scanners skip it at
  ``memchr`` speed. Nothing else keeps a list of "texts that matter".
* :data:`SHAPES`: the line shapes the whole-buffer scanners read in bulk, as token sequences
  (literal text, typed fields, optional groups). The Python scanner's regular expressions are
  compiled from them (:func:`regex`); the C scanner (``_fastscan.c``) reads the most common form
  of each (every optional group present, except the SGLang iteration tag and vLLM's form-3 rate)
  and says so when a line fits only the wider shape, so the Python scanner reads that buffer.
  Both are checked against the line parser by property tests on generated and real lines. A line
  that carries an anchor but fits no shape sends its buffer to the line parser.
* The field tables the line parsers read by key (:data:`SGLANG_DECODE_FIELDS`,
  :data:`VLLM_SPEC_FIELDS`) are the same fields the shapes name.

Each family declares its part in its own package (``<family>/grammar.py``); this module puts
them together in the order the C scanner knows them by. A family registered later (see
:mod:`tui.core.formats.registry`) adds anchors of its own: the scanners send a buffer holding one
to the line parser (:data:`EXTRA_ANCHORS`).
"""

from __future__ import annotations

from tui.core.formats.llamacpp import grammar as _llamacpp
from tui.core.formats.ollama import grammar as _ollama
from tui.core.formats.sglang import grammar as _sglang
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
from tui.core.formats.vllm import grammar as _vllm

# -- anchors ---------------------------------------------------------------------------------
SGLANG_DECODE = _sglang.DECODE
VLLM_SPEC = _vllm.SPEC
VLLM_SPEC_V0 = _vllm.SPEC_V0
VLLM_ENGINE = _vllm.ENGINE
LLAMACPP_TIMING = _llamacpp.TIMING
SGLANG_FINISH = _sglang.FINISH
LLAMACPP_STATS = _llamacpp.STATS
OLLAMA_MLX = _ollama.MLX
VLLM_BENCH = _vllm.BENCH
UVICORN_START = "Started server process"  # uvicorn, before either server's own lines
MARKER_ANCHORS = (
    _sglang.SERVER_ARGS,
    _sglang.READY,
    UVICORN_START,
    _vllm.VERSION,
    _vllm.NON_DEFAULT_ARGS,
    _vllm.ENGINE_INIT,
    *_sglang.ARGS_DICT,
    _vllm.SERVER_VERSION,
    _vllm.LOGO,
    _llamacpp.SYSTEM_INFO,
    _llamacpp.BUILD_INFO,
    _llamacpp.INIT,
)
# The first five keep their places: the C scanner knows them by index. The ones after them
# have no shape: a buffer holding one is the line parser's.
METRIC_ANCHORS = (
    SGLANG_DECODE,
    VLLM_SPEC,
    VLLM_SPEC_V0,
    VLLM_ENGINE,
    LLAMACPP_TIMING,
    SGLANG_FINISH,
    LLAMACPP_STATS,
    OLLAMA_MLX,
    VLLM_BENCH,
    _llamacpp.GRAPHS,
)
ANCHORS: tuple[str, ...] = METRIC_ANCHORS + MARKER_ANCHORS
# Anchors of the families registered after the bundled ones (registry.register): no scanner
# reads their lines, so a buffer holding one goes to the line parser.
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

# -- field tables (key as printed -> Record attribute) ---------------------------------------
SGLANG_DECODE_FIELDS = _sglang.DECODE_FIELDS
VLLM_SPEC_FIELDS = _vllm.SPEC_FIELDS

# -- shapes ----------------------------------------------------------------------------------
SGLANG_DECODE_SHAPE = _sglang.DECODE_SHAPE
VLLM_SPEC_SHAPE = _vllm.SPEC_SHAPE
VLLM_ENGINE_SHAPE = _vllm.ENGINE_SHAPE
LLAMACPP_TIMING_SHAPE = _llamacpp.TIMING_SHAPE
SHAPES = (SGLANG_DECODE_SHAPE, VLLM_SPEC_SHAPE, VLLM_ENGINE_SHAPE, LLAMACPP_TIMING_SHAPE)
