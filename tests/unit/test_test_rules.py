"""Rules for the tests themselves (CONTRIBUTING.md: tests never time anything).

* No fixed sleep in ``tests/unit`` or ``tests/functional``: ``time.sleep(N)``, ``asyncio.sleep(N)``
  or a pilot's ``pause(N)`` with a literal positive ``N`` stands in for a condition; wait for the
  condition itself (``tests/_wait.py``). ``asyncio.sleep(0)``, a yield to the event loop, is fine.
* No test anywhere asserts on elapsed time: an ``assert`` on a difference of ``monotonic()``,
  ``perf_counter()``, ``time()`` or a loop's ``time()``, directly or through a name the test
  function assigned from such a difference. Check the behaviour itself, or measure in ``bench/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
CLOCKS = {"monotonic", "perf_counter", "time", "monotonic_ns", "perf_counter_ns", "time_ns"}
SLEEPS = {"sleep", "pause"}


def _literal_positive(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
        and node.value > 0
    )


def fixed_sleeps(source: str) -> list[int]:
    """Lines that sleep (or pause a pilot) for a literal positive time."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name in SLEEPS and _literal_positive(node.args[0]):
            out.append(node.lineno)
    return out


def _is_clock(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr in CLOCKS) or (isinstance(f, ast.Name) and f.id in CLOCKS)


def _clock_difference(node: ast.AST, timed: set[str]) -> bool:
    """``node`` holds a difference with a clock reading on one side (or a name holding one)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Sub):
            if _is_clock(sub.left) or _is_clock(sub.right):
                return True
        if isinstance(sub, ast.Name) and sub.id in timed:
            return True
    return False


def elapsed_asserts(source: str) -> list[int]:
    """Lines of asserts on elapsed time, in each function of ``source``."""
    out = []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        timed: set[str] = set()
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and _clock_difference(node.value, timed):
                timed |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assert) and _clock_difference(node.test, timed):
                out.append(node.lineno)
    return sorted(set(out))


def _files(*folders: str) -> list[Path]:
    roots = [TESTS / f for f in folders] if folders else [TESTS]
    return sorted(p for r in roots for p in r.rglob("*.py") if "fixtures" not in p.parts)


def test_the_checks_find_what_they_look_for():
    bad_sleep = (
        "import time, asyncio\ndef f():\n    time.sleep(0.5)\nasync def g(pilot):\n    await pilot.pause(1)\n"
    )
    assert fixed_sleeps(bad_sleep) == [3, 5]
    assert fixed_sleeps("import asyncio\nasync def f():\n    await asyncio.sleep(0)\n") == []
    assert fixed_sleeps("async def f(pilot):\n    await pilot.pause()\n") == []
    bad_time = (
        "import time\n"
        "def test_a():\n    t0 = time.monotonic()\n    assert time.monotonic() - t0 < 1\n"
        "def test_b(loop):\n    t0 = loop.time()\n    took = loop.time() - t0\n    x = 1\n    assert took < 2\n"
        "def test_c():\n    t0 = time.perf_counter()\n    assert t0 > 0\n"
    )
    assert elapsed_asserts(bad_time) == [4, 9]


def test_no_fixed_sleep_in_unit_or_functional_tests():
    found = {
        str(p.relative_to(TESTS)): lines
        for p in _files("unit", "functional")
        if (lines := fixed_sleeps(p.read_text()))
    }
    assert found == {}, f"fixed sleeps (wait for the condition instead, tests/_wait.py): {found}"


def test_no_test_asserts_on_elapsed_time():
    found = {str(p.relative_to(TESTS)): lines for p in _files() if (lines := elapsed_asserts(p.read_text()))}
    assert found == {}, f"asserts on elapsed time (check the behaviour, or measure in bench/): {found}"


def test_no_test_module_imports_another():
    """Shared helpers live in ``tests/_*.py``: a test module importing another (``from test_x
    import …``) works only while both are on the path pytest builds for their folder."""
    found = []
    for path in _files("unit", "functional", "integration"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            found += [f"{path.relative_to(TESTS)}: {n}" for n in names if n.split(".")[0].startswith("test_")]
    assert found == []
