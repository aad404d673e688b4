"""Reading tui's modules with ``ast``, shared by the import-graph and shape tests."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path


def module_name(path: Path, root: Path) -> str:
    """The dotted name of the module at ``path`` (a package by its ``__init__.py``), ``root``
    being the folder that holds the top package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every ``import`` and ``from ... import`` anywhere in ``tree`` (module level, functions,
    classes) outside ``if TYPE_CHECKING:`` blocks (their ``else:`` counts)."""
    if isinstance(tree, ast.If) and _is_type_checking(tree.test):
        for child in tree.orelse:
            yield from runtime_imports(child)
        return
    if isinstance(tree, ast.Import | ast.ImportFrom):
        yield tree
    for child in ast.iter_child_nodes(tree):
        yield from runtime_imports(child)


def parse_file(path: Path) -> ast.Module:
    """``ast.parse`` of the file at ``path``, parsed once per process and file version (several
    tests walk every module of tui/ and tests/: each reads the same trees). The tree is shared:
    read it, never change it."""
    st = path.stat()
    return _parse(str(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=4096)
def _parse(path: str, mtime_ns: int, size: int) -> ast.Module:
    return ast.parse(Path(path).read_text(encoding="utf-8"), path)
