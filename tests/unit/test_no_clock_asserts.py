"""No test asserts how fast something is.

CI runs on a busy 2-core machine: a bound like `assert elapsed < 1.0` fails there while
the code is fine. Speed is measured in benchmarks/; a test states what it means instead
(an order of events, a count, a state, which of two timers fired) and bounds a wait only
to catch a hang, with a timeout far above the normal time (tests/hang.py).

The rule, checked on every file under tests/ with `ast`: no `assert` compares a value
read from a wall clock with a constant as an upper bound. A value is read from a wall
clock when it is a call of `time`, `time_ns`, `monotonic`, `monotonic_ns`,
`perf_counter` or `perf_counter_ns` (on any object: `time.monotonic()`, `loop.time()`),
or a name assigned from an expression holding one (or holding such a name) in the same
function, or a field called `elapsed` or `seconds` (`run.seconds`: how long a finished
run took, measured elsewhere). A constant is a number or an UPPER_CASE name.

Allowed, on purpose:
- lower bounds (`elapsed >= 0.2`): load only makes time longer, so a busy machine
  cannot fail them; they check that a requested delay happened;
- clock against clock (`time.monotonic() < deadline`, n against 2n in the same run);
- CPU-time clocks (`thread_time`, `process_time`): other processes do not count there.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
CLOCKS = frozenset(
    {"time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns"}
)
DURATION_FIELDS = frozenset({"elapsed", "seconds"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
#: A file without any of these words cannot break the rule (and is not parsed).
_CALLED = "|".join(sorted(CLOCKS))
_FIELDS = "|".join(sorted(DURATION_FIELDS))
_WORDS = re.compile(rf"\b(?:{_CALLED})\s*\(|\.(?:{_FIELDS})\b")


def _calls_clock(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and not sub.args and not sub.keywords:
            func = sub.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in CLOCKS:
                return True
    return False


def _uses(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(sub, ast.Name) and sub.id in names for sub in ast.walk(node))


def _timed(node: ast.AST, tainted: set[str]) -> bool:
    fields = (
        isinstance(sub, ast.Attribute) and sub.attr in DURATION_FIELDS for sub in ast.walk(node)
    )
    return _calls_clock(node) or _uses(node, tainted) or any(fields)


def _constant(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    return isinstance(node, ast.Name) and node.id.isupper()


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of one function (or module) body, not those of functions inside it."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))


def _tainted(scope: ast.AST, inherited: set[str]) -> set[str]:
    """Names that hold a clock reading (or something computed from one) in this scope."""
    assigns: list[tuple[list[ast.expr], ast.expr]] = []
    for node in _own_nodes(scope):
        if isinstance(node, ast.Assign):
            assigns.append((node.targets, node.value))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr) and node.value:
            assigns.append(([node.target], node.value))
    tainted = set(inherited)
    changed = True
    while changed:
        changed = False
        for targets, value in assigns:
            if not _timed(value, tainted):
                continue
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name) and sub.id not in tainted:
                        tainted.add(sub.id)
                        changed = True
    return tainted


def _upper_bounds(test: ast.expr, tainted: set[str]) -> Iterator[ast.Compare]:
    """Comparisons in `test` that cap a clock-derived value with a constant."""
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
            below = isinstance(op, ast.Lt | ast.LtE) and _timed(left, tainted)
            below = below and _constant(right)
            above = isinstance(op, ast.Gt | ast.GtE) and _timed(right, tainted)
            above = above and _constant(left)
            if below or above:
                yield node
                break


def clock_asserts(source: str, filename: str = "<test>") -> list[str]:
    """`file:line: code` for each assert that caps a wall-clock reading with a constant."""
    if not _WORDS.search(source):
        return []
    tree = ast.parse(source, filename)
    found: list[str] = []

    def visit(scope: ast.AST, inherited: set[str]) -> None:
        tainted = _tainted(scope, inherited)
        for node in _own_nodes(scope):
            if isinstance(node, ast.Assert):
                for compare in _upper_bounds(node.test, tainted):
                    found.append(f"{filename}:{compare.lineno}: {ast.unparse(compare)}")
            elif isinstance(node, _SCOPES):
                visit(node, tainted)

    visit(tree, set())
    return sorted(found)


def test_no_test_asserts_a_wall_clock_bound() -> None:
    files = sorted(TESTS.rglob("*.py"))
    assert len(files) > 50  # the scan reaches the suite
    found = [
        line
        for path in files
        for line in clock_asserts(path.read_text("utf-8"), str(path.relative_to(TESTS)))
    ]
    assert found == [], "speed belongs in benchmarks/; bound only hangs:\n" + "\n".join(found)


# --- the rule itself ------------------------------------------------------------------------

CAUGHT = {
    "elapsed name": """
def test():
    started = time.perf_counter()
    run()
    elapsed = time.perf_counter() - started
    assert elapsed < 1.0, f"took {elapsed:.2f} s"
""",
    "inline": """
async def test():
    started = time.monotonic()
    await run()
    assert time.monotonic() - started < 5
""",
    "event loop clock": """
async def test():
    loop = asyncio.get_running_loop()
    started = loop.time()
    await run()
    assert loop.time() - started < 60
""",
    "constant on the left": """
def test():
    t0 = monotonic()
    run()
    assert 2 > monotonic() - t0
""",
    "named constant, in a boolean": """
def test():
    t0 = time.time()
    ok = run()
    assert ok and time.time() - t0 <= LIMIT
""",
    "through two names": """
def test():
    t0 = time.monotonic()
    run()
    spent = time.monotonic() - t0
    ms = spent * 1000
    assert ms < 500
""",
    "a finished run's duration": """
def test(lantern):
    run = lantern.ask("q", timeout=30)
    assert run.rc == 3
    assert run.seconds < 15
""",
    "nested function sees the outer start": """
def test():
    t0 = time.monotonic()
    def check():
        assert time.monotonic() - t0 < 3
    check()
""",
}

ALLOWED = {
    "lower bound": """
def test():
    start = time.monotonic()
    run()
    assert time.monotonic() - start >= 0.2
""",
    "a deadline loop": """
def test():
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        left = deadline - time.monotonic()
        assert left > 0
""",
    "n against 2n": """
def test():
    t0 = time.perf_counter()
    run(1000)
    one = time.perf_counter() - t0
    t0 = time.perf_counter()
    run(2000)
    two = time.perf_counter() - t0
    assert two < 3 * one
""",
    "cpu time": """
def test():
    started = time.thread_time()
    run()
    assert time.thread_time() - started < 40.0
""",
    "no clock": """
def test():
    timeout = 5
    assert len(run()) < 5 and timeout < 10
""",
    "the same name in another function": """
def helper():
    elapsed = time.monotonic()
    return elapsed

def test():
    elapsed = count()
    assert elapsed < 3
""",
}


@pytest.mark.parametrize("source", CAUGHT.values(), ids=CAUGHT.keys())
def test_the_rule_catches(source: str) -> None:
    assert len(clock_asserts(source)) == 1


@pytest.mark.parametrize("source", ALLOWED.values(), ids=ALLOWED.keys())
def test_the_rule_allows(source: str) -> None:
    assert clock_asserts(source) == []
