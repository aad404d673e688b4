"""Rules for the tests themselves (CONTRIBUTING.md: tests never time anything).

* No fixed sleep in any test (unit, functional, integration, the helpers): ``time.sleep(N)``,
  ``asyncio.sleep(N)`` or a pilot's ``pause(N)`` with a constant positive ``N`` (a literal, a sum of
  literals, a name bound to one) stands in for a condition; wait for the condition itself
  (``tests/_wait.py``), or, to see that nothing more comes, for a last line written after
  everything else. ``asyncio.sleep(0)``, a yield to the event loop, is fine, and so is a writer
  pacing its own output (``PACING``: a short explicit list, each with a comment at the sleep).
* No ``assert`` right after a pilot's ``pause()``, ``press()`` or ``click()``: what the key or the
  pause was for is waited for (``_tui_util.wait_for``); on a busy machine ``pause()`` returns once
  the app looks idle, as a process starved of CPU does too. An absence (``assert not ...``, or a
  line marked ``# absence``) is checked after the pause, as waiting cannot show it.
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


PACING = {
    # file (relative to tests/) :: the function whose loop paces a writer; nothing waits there
    "integration/test_ssh_sshd.py::writer": "a line every 5 ms, through the outage",
    "integration/test_ssh_rotations.py::run": "the logrotate-style writer's own pace (lines and rotations)",
    "unit/test_sources_file_generations.py::writer": "a rotation every 0.2 s while lines are written",
    "functional/test_fleet_refresh.py::slow": "a Prometheus that answers 0.3 s late (the delay is the point)",
    "integration/test_live_faults.py::test_rotated_file_written_for_5s_more_is_read_to_its_end": (
        "the program writes to the renamed file for 5 s, 100 lines"
    ),
}
"""Sleeps that pace a writer (the rate of its output is the point, not a state waited for)."""

_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b}
_OPS[ast.Div] = lambda a, b: a / b if b else None


def _constant(node: ast.expr, names: dict[str, float]) -> float | None:
    """The value of ``node`` when it is a number known without running anything: a literal, a
    sign or arithmetic of such, or a name bound to one (``names``)."""
    if isinstance(node, ast.Constant):
        v = node.value
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _constant(node.operand, names)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = _constant(node.left, names), _constant(node.right, names)
        return None if a is None or b is None else _OPS[type(node.op)](a, b)
    if isinstance(node, ast.Name):
        return names.get(node.id)
    return None


def _constant_names(tree: ast.AST) -> dict[str, float]:
    """Names bound only ever to a constant number, anywhere in the module."""
    bound: dict[str, list[float | None]] = {}
    for node in ast.walk(tree):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign | ast.AugAssign)
            else []
        )
        value = getattr(node, "value", None)
        for t in targets:
            if isinstance(t, ast.Name):
                v = None if isinstance(node, ast.AugAssign) or value is None else _constant(value, {})
                bound.setdefault(t.id, []).append(v)
    return {k: vs[0] for k, vs in bound.items() if all(v is not None for v in vs) and len(set(vs)) == 1}


def fixed_sleeps_in(source: str) -> list[tuple[int, str]]:
    """(line, enclosing function) of each sleep (or pilot pause) for a constant positive time."""
    tree = ast.parse(source)
    names = _constant_names(tree)
    out = []

    def visit(node: ast.AST, fn: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            fn = node.name
        if isinstance(node, ast.Call) and node.args:
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            v = _constant(node.args[0], names) if name in SLEEPS else None
            if v is not None and v > 0:
                out.append((node.lineno, fn))
        for child in ast.iter_child_nodes(node):
            visit(child, fn)

    visit(tree, "")
    return sorted(out)


def fixed_sleeps(source: str) -> list[int]:
    """Lines that sleep (or pause a pilot) for a constant positive time."""
    return [line for line, _ in fixed_sleeps_in(source)]


PILOT_STEPS = {"pause", "press", "click"}


def asserts_after_a_pilot_step(source: str) -> list[int]:
    """Lines of ``assert`` statements that directly follow ``await <pilot>.pause()`` (or
    ``press``/``click``) in the same block, except absences (``assert not ...``, ``# absence``)."""
    lines = source.splitlines()
    out = []
    for node in ast.walk(ast.parse(source)):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            for a, b in zip(stmts, stmts[1:]):
                if not (isinstance(a, ast.Expr) and isinstance(a.value, ast.Await)):
                    continue
                call = a.value.value
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                    continue
                if call.func.attr not in PILOT_STEPS or not isinstance(b, ast.Assert):
                    continue
                absence = isinstance(b.test, ast.UnaryOp) and isinstance(b.test.op, ast.Not)
                if not absence and "# absence" not in lines[b.end_lineno - 1]:
                    out.append(b.lineno)
    return sorted(out)


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
    constant = "import time\nSTEP = 0.2\ndef f(late):\n    time.sleep(STEP * 2)\n    time.sleep(late / 100)\n    time.sleep(1 / 2)\n"
    assert fixed_sleeps_in(constant) == [(4, "f"), (6, "f")]  # ``late`` is a parameter: not known
    assert fixed_sleeps("x = 1\nx = 2\ndef f():\n    sleep(x)\n") == []  # two values: not a constant
    stepped = (
        "async def t(pilot, app):\n    await pilot.press('x')\n    assert app.x\n"
        "    await pilot.pause()\n    assert not app.toasts\n"
        "    await pilot.pause()\n    assert app.running  # absence: nothing obeyed\n"
        "    await pilot.pause()\n    y = 1\n    assert y\n"
    )
    assert asserts_after_a_pilot_step(stepped) == [3]
    bad_time = (
        "import time\n"
        "def test_a():\n    t0 = time.monotonic()\n    assert time.monotonic() - t0 < 1\n"
        "def test_b(loop):\n    t0 = loop.time()\n    took = loop.time() - t0\n    x = 1\n    assert took < 2\n"
        "def test_c():\n    t0 = time.perf_counter()\n    assert t0 > 0\n"
    )
    assert elapsed_asserts(bad_time) == [4, 9]


def test_no_fixed_sleep_in_any_test():
    found, paced = {}, set()
    for p in _files():
        rel = str(p.relative_to(TESTS))
        for line, fn in fixed_sleeps_in(p.read_text()):
            if f"{rel}::{fn}" in PACING:
                paced.add(f"{rel}::{fn}")
            else:
                found.setdefault(rel, []).append(line)
    assert found == {}, f"fixed sleeps (wait for the condition instead, tests/_wait.py): {found}"
    assert paced == set(PACING), f"PACING names a sleep that is no longer there: {set(PACING) - paced}"


def test_no_assert_right_after_a_pilot_step():
    found = {
        str(p.relative_to(TESTS)): lines
        for p in _files()
        if (lines := asserts_after_a_pilot_step(p.read_text()))
    }
    assert found == {}, (
        f"an assert right after pause()/press()/click(): wait for it (_tui_util.wait_for): {found}"
    )


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
