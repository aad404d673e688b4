"""The server families specwatch reads, in the order a line is offered to them: one line per
family. A new family is one package under ``tui/core/formats/`` with a
:class:`tui.core.formats.plugin.Format` subclass, and one line here (or a call to
:func:`register` at run time).
"""

from __future__ import annotations

from tui.core.formats import grammar
from tui.core.formats.llamacpp.plugin import LlamaCpp
from tui.core.formats.ollama.plugin import Ollama
from tui.core.formats.plugin import Format
from tui.core.formats.sglang.plugin import SGLang
from tui.core.formats.trtllm.plugin import TrtLlm
from tui.core.formats.vllm.plugin import Vllm

FORMATS: list[Format] = [
    SGLang(),
    Vllm(),
    LlamaCpp(),
    TrtLlm(),
    Ollama(),
]

GENERIC = Format()  # what a record of no known family is counted as
_BY_NAME: dict[str, Format] = {f.name: f for f in FORMATS}


def get(name: str | None) -> Format:
    """The plug-in of a family (:data:`GENERIC` for None or a name no plug-in has)."""
    return _BY_NAME.get(name or "", GENERIC)


def names() -> tuple[str, ...]:
    return tuple(f.name for f in FORMATS)


def register(fmt: Format) -> None:
    """Add a family after the bundled ones (its lines are offered to it last). Its anchors join
    :data:`grammar.EXTRA_ANCHORS`: the scanners leave a buffer holding one to the line parser."""
    if fmt.name in _BY_NAME:
        raise ValueError(f"a family named {fmt.name!r} is registered already")
    FORMATS.append(fmt)
    _BY_NAME[fmt.name] = fmt
    for a in (*fmt.anchors, *fmt.marker_anchors):
        if a not in grammar.ANCHORS and a not in grammar.EXTRA_ANCHORS:
            grammar.EXTRA_ANCHORS.append(a)


def unregister(name: str) -> None:
    """Remove a family added by :func:`register` (tests)."""
    fmt = _BY_NAME.pop(name)
    FORMATS.remove(fmt)
    keep = {a for f in FORMATS for a in (*f.anchors, *f.marker_anchors)}
    grammar.EXTRA_ANCHORS[:] = [a for a in grammar.EXTRA_ANCHORS if a in keep]
