"""Server families are plug-ins (tui/core/formats/<family>/, listed in formats/registry.py).

* No module outside ``tui/core/formats/`` names a family in a string literal, except the
  display-only texts listed below (each with its reason).
* Every registered plug-in provides every hook of :class:`Format`, with the declared types.
* A toy family registered at run time is detected and summarised end to end through
  ``summarize_stream`` without any other module knowing it: one class + one registration.
"""

from __future__ import annotations

import ast
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from _ast_util import parse_file

from tui.core.formats import grammar, registry
from tui.core.formats.families import FAMILIES
from tui.core.formats.family_data import FamilyData
from tui.core.formats.plugin import HOOKS, NOT_MINE, Format, Found, Line, MetricsReader, RateEvidence
from tui.core.formats.rate_definition import RateDefinition
from tui.core.formats.server_config import ServerConfig
from tui.core.model.records import RATE_DRAFTS, Record

ROOT = Path(__file__).resolve().parents[2] / "tui"
FORMATS_DIR = ROOT / "core" / "formats"
# the family folders: the only places that may name a family
FAMILY_DIRS = {f.folder.resolve() for f in FAMILIES if FORMATS_DIR in f.folder.resolve().parents}
# a family's name or display name as a word, from the families' data (an identifier that only
# begins with one, such as the rate id "sglang_al_over_num_draft_tokens", is a name of its own)
FAMILY = re.compile(
    r"(?<![\w.])("
    + "|".join(
        sorted({re.escape(t) for f in FAMILIES for t in (f.data.name, f.data.display)}, key=len, reverse=True)
    )
    + r")(?![\w])",
    re.IGNORECASE,
)

# (module, a piece of the text, why it may name a family): user-facing prose only
DISPLAY_ONLY = [
    ("screens/help.py", "# specwatch", "the help screen's prose (its list of families is derived)"),
]


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _names_in(node: ast.AST) -> list[str]:
    """The string constant or the identifiers a node holds (names, attributes, definitions,
    arguments, imports)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.alias):
        return [node.name, *(node.name.split("."))] + ([node.asname] if node.asname else [])
    if isinstance(node, ast.ImportFrom) and node.module:
        return node.module.split(".")
    return []


def _outside_the_families() -> Iterator[tuple[Path, int, str, bool]]:
    """(module, line, text, reaches a field) for every string and identifier of every module
    outside the family folders (docstrings aside; keyword arguments' names included). "Reaches a
    field": an attribute (``rec.x``), a keyword (``x=``) or a string (``getattr(rec, "x")``), the
    ways a record's field is read or written (a local name of the same word is not)."""
    for path in sorted(ROOT.rglob("*.py")):
        if any(d in path.resolve().parents for d in FAMILY_DIRS):
            continue
        tree = parse_file(path)
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if id(node) in docs:
                continue
            names = _names_in(node)
            if isinstance(node, ast.keyword) and node.arg:
                names.append(node.arg)
            field = isinstance(node, (ast.Attribute, ast.keyword, ast.Constant))
            for text in names:
                yield path, getattr(node, "lineno", 0), text, field


def _family_literals() -> list[tuple[str, int, str]]:
    return [
        (path.relative_to(ROOT).as_posix(), line, text)
        for path, line, text, _ in _outside_the_families()
        if FAMILY.search(text)
    ]


def test_the_scan_finds_family_names():
    assert FAMILY.search('if family == "sglang"') and FAMILY.search("TensorRT-LLM metrics")
    assert FAMILY.search("vllm:spec_decode_num_drafts_total") and FAMILY.search("llama.cpp")
    assert not FAMILY.search("sglang_al_over_num_draft_tokens")
    tree = ast.parse("from tui.core.formats.vllm.plugin import Vllm\nclass SGLang: pass\nx = obj.ollama")
    names = [t for node in ast.walk(tree) for t in _names_in(node)]
    assert {"vllm", "Vllm", "SGLang", "ollama"} <= {t for t in names if FAMILY.search(t)}


def test_no_family_name_outside_its_folder():
    """Outside tui/core/formats/<family>/ no module names a family, in a string or an identifier
    (docstrings aside): the registry, the families' data and the plug-in hooks say it all."""
    literals = _family_literals()
    allowed = [
        (mod, line, text)
        for mod, line, text in literals
        if any(mod == m and piece in text for m, piece, _ in DISPLAY_ONLY)
    ]
    unexplained = [x for x in literals if x not in allowed]
    assert not unexplained, (
        "family names outside tui/core/formats/<family>/ (ask the family's plug-in or its data):\n"
        + "\n".join(f"  {mod}:{line}: {text[:80]!r}" for mod, line, text in unexplained)
    )
    used = {(m, p) for m, p, _ in DISPLAY_ONLY if any(mod == m and p in t for mod, _, t in allowed)}
    stale = [(m, p) for m, p, _ in DISPLAY_ONLY if (m, p) not in used]
    assert not stale, f"display-only entries that match nothing any more: {stale}"


def _types() -> dict[str, type | tuple[type, ...]]:
    return {
        "name": str,
        "display": str,
        "anchors": tuple,
        "marker_anchors": tuple,
        "ends_wrapped_args": tuple,
        "metric_prefixes": tuple,
        "request_kinds": frozenset,
        "no_spec_note": str,
        "looked_for": str,
        "wrapped_markers": dict,
        "sum_matches": dict,
        "aux_layer_ids": (tuple, type(None)),
        "data": FamilyData,
        "metrics_moved_to": (str, type(None)),
    }


@pytest.mark.parametrize("fmt", registry.FORMATS, ids=lambda f: f.name)
def test_every_plugin_provides_every_hook(fmt: Format):
    assert isinstance(fmt, Format)
    assert fmt.name and fmt.display and fmt.data is not None, "a plug-in is made from its family's data"
    assert (fmt.name, fmt.display) == (fmt.data.name, fmt.data.display)
    assert registry.get(fmt.name) is fmt
    types = _types()
    for hook in HOOKS:
        value = getattr(fmt, hook)
        if callable(getattr(Format, hook)):
            assert callable(value), hook
        elif hook in types:
            assert isinstance(value, types[hook]), (hook, value)
        else:
            assert isinstance(value, bool), (hook, value)
    assert set(fmt.anchors) | set(fmt.marker_anchors) <= set(grammar.ANCHORS), (
        "a bundled family's anchors are the grammar's"
    )
    assert all(isinstance(a, str) and a for a in (*fmt.anchors, *fmt.marker_anchors, *fmt.metric_prefixes))
    state = fmt.new_state()
    fmt.reset(state)
    assert fmt.busy(state) is False
    rd = fmt.rate_definition(RateEvidence(None, ServerConfig(family=fmt.name), None, [], None))
    assert isinstance(rd, RateDefinition)
    reader = fmt.metrics()
    assert reader is None or isinstance(reader, MetricsReader)
    assert (reader is None) == (not fmt.metric_prefixes), "a family with /metrics names reads them"
    line = Line("x", 1, 0, "nothing of anyone's", "nothing of anyone's", None)  # type: ignore[arg-type]
    assert fmt.parse(state, line) is NOT_MINE


def test_family_names_are_unique():
    assert len(set(registry.names())) == len(registry.FORMATS)


# -- a toy family, registered at run time ------------------------------------------------------
TOY_LINE = re.compile(r"TOYSPEC accepted=(\d+) drafted=(\d+) steps=(\d+)")


class Toy(Format):
    """``... TOYSPEC accepted=A drafted=D steps=S``: one line per window; ``toy server up k=K``."""

    name = "toyllm"
    display = "ToyLLM"
    anchors: ClassVar[tuple[str, ...]] = ("TOYSPEC ",)
    marker_anchors: ClassVar[tuple[str, ...]] = ("toy server up",)

    def parse(self, state: Any, line: Line) -> Any:
        m = TOY_LINE.search(line.text)
        if m is None:
            return NOT_MINE
        acc, dr, steps = map(int, m.groups())
        return Record(
            line.source,
            line.line_no,
            line.offset,
            self.name,
            "toy",
            line.raw,
            accept_len=1.0 + acc / steps,
            accept_rate=acc / dr,
            rate_definition=RATE_DRAFTS,
            accepted=acc,
            drafted=dr,
            num_drafts=float(steps),
        )

    def marker(self, text: str) -> Found | None:
        if "toy server up" in text:
            k = re.search(r"k=(\d+)", text)
            return "toy_start", self.name, {"num_speculative_tokens": int(k.group(1))} if k else {}, None
        return None


@pytest.fixture
def toy():
    fmt = Toy()
    registry.register(fmt)
    try:
        yield fmt
    finally:
        registry.unregister(fmt.name)
    assert "TOYSPEC " not in grammar.EXTRA_ANCHORS


def _toy_log() -> bytes:
    lines = ["boot noise", "toy server up k=4"]
    lines += [f"t={i} TOYSPEC accepted={2 * i + 2} drafted={4 * i + 8} steps={i + 2}" for i in range(40)]
    lines += ["toy server up k=4", "unrelated line"]
    lines += [f"t={i} TOYSPEC accepted=3 drafted=8 steps=2" for i in range(10)]
    return ("\n".join(lines) + "\n").encode()


def test_a_toy_family_is_detected_and_summarised(toy):
    from tui.core.pipeline.whole import summarize_stream

    r = summarize_stream(io.BytesIO(_toy_log()), "toy.log").result()
    assert r["family"] == "toyllm"
    assert r["records"] == 50 and r["malformed"] == 0
    segs = r["segments"]
    assert [s["records"] for s in segs] == [40, 10]
    assert segs[0]["config"]["family"] == "toyllm" and segs[1]["reason"] == "toy_start"
    acc = sum(2 * i + 2 for i in range(40))
    steps = sum(i + 2 for i in range(40))
    pooled = segs[0]["accept_len"]["pooled"]
    assert pooled["accepted"] == acc and pooled["drafts"] == steps
    assert pooled["value"] == pytest.approx(1.0 + acc / steps)
    assert segs[1]["accept_rate"]["pooled"]["value"] == pytest.approx(30 / 80)


def test_without_registration_the_toy_lines_are_nobodys():
    from tui.core.pipeline.whole import summarize_stream

    r = summarize_stream(io.BytesIO(_toy_log()), "toy.log").result()
    assert r["records"] == 0 and r["family"] is None


# -- family-only fields -----------------------------------------------------------------------
# The records' fields (model/records.py) that are no registered quantity and that one family's
# folder alone names are that family's own: no other module may read or write them (a quantity
# is generic by its registry entry: any family may fill it). A field named here is a concept
# that generic code handles whichever family fills it (with the reason).
GENERIC_FIELDS = {
    "cumulative": "running totals since the start: the statistics difference them (Prometheus counters too)",
    # (step_histogram: SGLang's Finish lines and llama.cpp's traced steps fill it: no family's own)
    "more": "the values of the quantities registered beyond the built-in ones, whichever family prints them",
    "process": "the line prefix's process tag, a declared capture of family.toml's prefixes",
}
RECORDS = ROOT / "core" / "model" / "records.py"


def _strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return {s for k, v in value.items() for s in (_strings(k) | _strings(v))}
    if isinstance(value, list):
        return {s for v in value for s in _strings(v)}
    return set()


def _named_in_folder(folder: Path) -> set[str]:
    import tomllib

    out: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(parse_file(path)):
            out.update(_names_in(node))
            if isinstance(node, ast.keyword) and node.arg:
                out.add(node.arg)
    toml = folder / "family.toml"
    if toml.is_file():
        out |= _strings(tomllib.loads(toml.read_text(encoding="utf-8")))
    return out


def _record_fields() -> dict[str, int]:
    """Every field records.py's Record (what every family's metric lines make) declares, with
    its line."""
    out = {}
    for cls in parse_file(RECORDS).body:
        if isinstance(cls, ast.ClassDef) and cls.name == "Record":
            for st in cls.body:
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                    out[st.target.id] = st.lineno
    return out


def family_only_fields() -> dict[str, str]:
    """field -> the one family whose folder names it."""
    from tui.core.model.quantities import column_names

    named = {f.name: _named_in_folder(f.folder) for f in FAMILIES if f.folder.resolve() in FAMILY_DIRS}
    out = {}
    for field in set(_record_fields()) - set(column_names()):
        fams = [name for name, names in named.items() if field in names]
        if len(fams) == 1:
            out[field] = fams[0]
    return out


def test_the_family_only_fields_are_found():
    own = family_only_fields()
    assert own.get("cumulative") == "vllm" and own.get("gen_drafts") == "llamacpp"
    assert own.get("graph") == "sglang"
    assert "accept_len" not in own and "per_position" not in own  # a quantity; two families'


def test_no_family_only_field_outside_its_folder():
    """Outside tui/core/formats/<family>/ no module reaches a field only one family fills (as an
    attribute, a keyword or a string; docstrings aside), except where records.py declares it
    and the generic concepts above: a family's own value is its plug-in's."""
    own = {f: fam for f, fam in family_only_fields().items() if f not in GENERIC_FIELDS}
    declared = {(f, line) for f, line in _record_fields().items()}
    found = [
        f"  {path.relative_to(ROOT).as_posix()}:{line}: {text} ({own[text]}'s)"
        for path, line, text, field in _outside_the_families()
        if field and text in own and not (path == RECORDS and (text, line) in declared)
    ]
    assert not found, "family-only fields outside their family's folder:\n" + "\n".join(found)
    stale = [f for f in GENERIC_FIELDS if f not in family_only_fields()]
    assert not stale, f"generic fields that are no family's own any more: {stale}"
