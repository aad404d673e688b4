"""No import cycle in tui/, counting imports inside functions (``if TYPE_CHECKING:`` aside).

The graph is built with ``ast`` from the source files: every ``import`` and ``from ... import``
anywhere in a module (module level, functions, classes) is an edge to the tui module it names
(``from pkg import mod`` is an edge to ``pkg.mod`` when that is a module).
"""

from __future__ import annotations

import ast
from pathlib import Path

from _ast_util import module_name, parse_file, runtime_imports

ROOT = Path(__file__).parent.resolve().parents[1]


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[tuple[str, str | None]]:
    """Every import anywhere in ``tree`` outside ``if TYPE_CHECKING:`` blocks, as (module, name
    imported from it or None)."""
    found: set[tuple[str, str | None]] = set()
    for node in runtime_imports(tree):
        if isinstance(node, ast.Import):
            found.update((alias.name, None) for alias in node.names)
            continue
        if node.level:
            base = module.split(".")
            base = base if is_package else base[:-1]
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        found.update((target, alias.name) for alias in node.names)
    return found


def import_graph(root: Path = ROOT / "tui") -> dict[str, set[str]]:
    paths = {module_name(p, ROOT): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        tree = parse_file(path)
        edges = set()
        for target, imported in _imports(tree, name, path.name == "__init__.py"):
            sub = f"{target}.{imported}"
            edges.add(sub if sub in paths else target)  # ``from pkg import module``: the module
        graph[name] = {n for n in edges if n in paths and n != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def strong(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_the_graph_sees_function_level_imports():
    g = import_graph()
    # spec.py reads texts through the kinds; the kinds import the SSH source inside a method.
    assert "tui.core.sources.kinds" in g["tui.core.sources.spec"]
    assert "tui.core.sources.ssh.source" in g["tui.core.sources.kinds.remote_kinds"]
    # ``from pkg import module`` counts as an import of the module
    assert "tui.core.stats.metrics" in g["tui.core.stats"]


def test_cycles_are_found():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(g) == [["a", "b", "c"]]
    tree = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x\ndef f():\n    import y\n"
    )
    assert _imports(tree, "m", False) == {("typing", "TYPE_CHECKING"), ("y", None)}


def test_no_import_cycle_in_tui():
    found = cycles(import_graph())
    assert found == [], "import cycles (module-level and function-level imports): " + "; ".join(
        " ↔ ".join(c) for c in found
    )
