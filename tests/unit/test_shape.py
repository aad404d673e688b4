"""The shape of the code, checked from the source files (``ast``, ``pyproject.toml``):

(a) no Python module under ``tui/`` and no ``.c``/``.h`` file is longer than :data:`MAX_LINES`;
(b) every module of ``tui`` falls under a layer of an import-linter layers contract, and every
    module of ``tui.core`` under a layer inside ``tui.core`` (the core's own rooms);
(c) no module under ``tui/core`` imports textual or rich outside ``if TYPE_CHECKING:`` (the
    run-time check is ``tests/integration/test_layers.py``);
(d) no module under ``tui/`` reads a private attribute (``x._name``, not a dunder) of anything
    but ``self``, ``cls`` or ``super()``, unless a class of the same module defines that name
    (a module's privates are its own); the few exceptions are listed with their reasons.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from _ast_util import module_name, parse_file, runtime_imports

ROOT = Path(__file__).resolve().parents[2]
TUI = ROOT / "tui"
MAX_LINES = 450
LONGER_ALLOWED: dict[str, int] = {}  # (none now: the scanner is split by concept)

# (d): (module path relative to the repository, "x._name" as written) -> why it is allowed
PRIVATE_READS_ALLOWED = {
    (
        "tui/cli/__init__.py",
        "os._exit",
    ): "the standard library's exit without clean-up (public, despite its name)",
    (
        "tui/cli/exit_deadline.py",
        "os._exit",
    ): "the last-resort exit past the deadline (public, despite its name)",
    ("tui/cli/stream.py", "argparse._SubParsersAction"): (
        "the type of argparse's subparsers object has no public name (annotation only)"
    ),
}


def _modules() -> dict[str, Path]:
    """Every module of ``tui`` by dotted name (a package by its ``__init__.py``)."""
    return {module_name(path, ROOT): path for path in sorted(TUI.rglob("*.py"))}


def _runtime_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every absolute import outside ``if TYPE_CHECKING:`` blocks."""
    found: list[tuple[int, str]] = []
    for node in runtime_imports(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif not node.level and node.module:
            found.append((node.lineno, node.module))
    return found


# -- (a) sizes -----------------------------------------------------------------------------------


def test_no_module_or_c_file_is_longer_than_the_limit():
    files = sorted(TUI.rglob("*.py")) + sorted(TUI.rglob("*.c")) + sorted(TUI.rglob("*.h"))
    assert len(files) > 100
    long = {}
    for path in files:
        n = len(path.read_text(encoding="utf-8").splitlines())
        rel = str(path.relative_to(ROOT))
        if n > LONGER_ALLOWED.get(rel, MAX_LINES):
            long[rel] = n
    assert long == {}, f"longer than {MAX_LINES} lines: {long}"


# -- (b) every module under a layer --------------------------------------------------------------


def _layers_contracts() -> list[list[str]]:
    """Each layers contract's modules (independent ``|`` and non-independent ``:`` siblings split;
    an optional one, in parentheses, marked by a leading ``?``)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    out = []
    for c in contracts:
        if c["type"] != "layers":
            continue
        names = []
        for layer in c["layers"]:
            for sep in ("|", ":"):
                layer = layer.replace(sep, " ")
            names.extend("?" + n[1:-1] if n.startswith("(") else n for n in layer.split())
        out.append(names)
    return out


def _under(module: str, layer: str) -> bool:
    return module == layer or module.startswith(layer + ".")


def _container(path: Path) -> bool:
    """A package whose ``__init__.py`` imports none of specwatch's modules: it only holds its
    modules (the top package's early signal handler imports the standard library alone)."""
    if path.name != "__init__.py":
        return False
    found = _runtime_imports(parse_file(path))
    return not any(_under(module, "tui") for _, module in found)


def test_every_module_falls_under_a_layer():
    contracts = _layers_contracts()
    assert len(contracts) >= 2
    layers = [name.lstrip("?") for c in contracts for name in c]
    core_layers = [name for name in layers if name.startswith("tui.core.")]
    uncovered, core_uncovered = [], []
    for module, path in _modules().items():
        if _container(path):
            continue
        if not any(_under(module, layer) for layer in layers):
            uncovered.append(module)
        if _under(module, "tui.core") and not any(_under(module, layer) for layer in core_layers):
            core_uncovered.append(module)
    assert uncovered == [], "modules under no layer of a layers contract"
    assert core_uncovered == [], "core modules under none of the core's own layers"


def test_every_layer_names_a_module():
    """A layer with a misspelt or moved module would cover nothing (an optional one may be gone)."""
    modules = _modules()
    names = [layer for c in _layers_contracts() for layer in c]
    missing = [layer for layer in names if not layer.startswith("?") and layer not in modules]
    assert missing == []


# -- (c) the core is headless --------------------------------------------------------------------


def test_core_does_not_import_textual_or_rich_at_run_time():
    bad = []
    for module, path in _modules().items():
        if not _under(module, "tui.core"):
            continue
        for line, name in _runtime_imports(parse_file(path)):
            if _under(name, "textual") or _under(name, "rich"):
                bad.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert bad == []


# -- (d) no reading of another module's privates -------------------------------------------------


def _own_privates(tree: ast.AST) -> set[str]:
    """Private names the classes of a module define: methods, class attributes, ``self._x = ``."""
    names: set[str] = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for node in ast.walk(cls):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("_"):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("self", "cls")
            ):
                names.add(node.attr)
    return {n for n in names if n.startswith("_")}


def _private_reads(path: Path) -> list[tuple[int, str]]:
    tree = parse_file(path)
    own = _own_privates(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        if node.attr.startswith("__") and node.attr.endswith("__"):
            continue
        v = node.value
        if isinstance(v, ast.Name) and v.id in ("self", "cls"):
            continue
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super":
            continue
        if node.attr in own:
            continue
        found.append((node.lineno, ast.unparse(node)))
    return found


def _private_reads_under(folder: Path) -> list[str]:
    bad = []
    for path in sorted(folder.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        for line, text in _private_reads(path):
            if (rel, text) not in PRIVATE_READS_ALLOWED:
                bad.append(f"{rel}:{line}: {text}")
    return bad


def test_the_check_for_private_reads_finds_them(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(
        "class A:\n"
        "    def __init__(self):\n"
        "        self._mine = 1\n"
        "    def same(self, other):\n"
        "        return other._mine + self._x + super()._y + other.__dict__\n"
        "def f(src):\n"
        "    return src._tag, src._mine\n"
    )
    assert _private_reads(p) == [(7, "src._tag")]


def test_core_reads_no_private_attribute_of_another_module():
    assert _private_reads_under(TUI / "core") == []


def test_no_module_reads_a_private_attribute_of_another_module():
    assert _private_reads_under(TUI) == []


def test_allowed_private_reads_are_still_there():
    """An exception that is no longer needed is taken off the list."""
    stale = []
    for rel, text in PRIVATE_READS_ALLOWED:
        if text not in {t for _, t in _private_reads(ROOT / rel)}:
            stale.append((rel, text))
    assert stale == []
