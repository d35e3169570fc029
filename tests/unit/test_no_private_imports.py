"""Lantern uses its libraries through their public APIs only.

A private name (`_x`) of a third-party package can change or vanish in any release:
`openai._streaming` or a `_make_sse_decoder` hook would break Lantern on an upgrade
that its version range allows. This walks every module of `server/lantern` with `ast`
and refuses, for third-party modules (not the standard library, not `lantern` itself):
- `import x._y`, `from x._y import z`, `from x import _y` (a private module or name);
- `x._y` where `x` names a third-party module or something imported from one;
- a class deriving from a third-party class that defines or uses (`self._y`) a private
  member of that class, i.e. overrides or calls its internals;
- `getattr`/`hasattr`/`setattr` with a private name in a string (what the type
  checker cannot see), other than on `self`/`cls`.
namedtuple's documented `_asdict`, `_replace`, `_fields`, `_make` are public.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

SERVER = Path(__file__).resolve().parents[2] / "server" / "lantern"
PUBLIC_UNDERSCORE = {"_asdict", "_replace", "_fields", "_make", "_field_defaults"}
REFLECTION = {"getattr", "hasattr", "setattr", "delattr"}


def _private(name: str) -> bool:
    dunder = name.startswith("__") and name.endswith("__")
    return name.startswith("_") and not dunder and name not in PUBLIC_UNDERSCORE


def _third_party(module: str) -> bool:
    top = module.split(".")[0]
    return top != "lantern" and top not in sys.stdlib_module_names


def _is_module(dotted: str) -> bool:
    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError):
        return False


def _resolve(dotted: str) -> Any:
    """The object a dotted name stands for, or None."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            found = getattr(found, attr, None)
        return found
    return None


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


def _dotted(node: ast.expr, bound: dict[str, str]) -> str | None:
    """`a.b.c` as the full dotted name of what it refers to, when `a` is third-party."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.insert(0, node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in bound:
        return ".".join([bound[node.id], *attrs])
    return None


def findings(source: str, where: str = "<code>") -> list[str]:
    """Every private use of a third-party package in `source`."""
    tree = ast.parse(source)
    found: list[str] = []
    bound: dict[str, str] = {}  # a local name -> the third-party thing it is bound to

    def report(node: ast.AST, what: str) -> None:
        found.append(f"{where}:{getattr(node, 'lineno', 0)}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for what in _bind_import(node, bound):
                report(node, what)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            root = _root(node)
            if isinstance(root, ast.Name) and root.id in bound:
                report(node, f"{bound[root.id]}….{node.attr}")
        elif isinstance(node, ast.Call) and _reflects_private(node):
            report(node, f"{ast.unparse(node.func)}(…, {ast.unparse(node.args[1])})")
        elif isinstance(node, ast.ClassDef):
            found += _private_members(node, bound, where)
    return found


def _bind_import(node: ast.Import | ast.ImportFrom, bound: dict[str, str]) -> list[str]:
    """Record in `bound` what a third-party import binds; return its private names."""
    private: list[str] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if not _third_party(alias.name):
                continue
            if any(_private(part) for part in alias.name.split(".")):
                private.append(f"import {alias.name}")
            top = alias.name.split(".")[0]
            bound[alias.asname or top] = alias.name if alias.asname else top
        return private
    if node.level or not node.module or not _third_party(node.module):
        return private
    if any(_private(part) for part in node.module.split(".")):
        private.append(f"from {node.module} import …")
    for alias in node.names:
        if _private(alias.name):
            private.append(f"from {node.module} import {alias.name}")
        bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return private


def _reflects_private(call: ast.Call) -> bool:
    if not (isinstance(call.func, ast.Name) and call.func.id in REFLECTION):
        return False
    if len(call.args) < 2 or not isinstance(name := call.args[1], ast.Constant):
        return False
    target = call.args[0]
    own = isinstance(target, ast.Name) and target.id in ("self", "cls")
    return isinstance(name.value, str) and _private(name.value) and not own


def _private_members(cls: ast.ClassDef, bound: dict[str, str], where: str) -> list[str]:
    """A subclass of a third-party class touching that class's private members."""
    bases = [b for b in (_resolve(d) for d in _base_names(cls, bound)) if isinstance(b, type)]
    if not bases:
        return []
    out: list[str] = []
    for node in ast.walk(cls):
        name = None
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node in cls.body:
            name = node.name
        elif isinstance(node, ast.Attribute) and _own(node.value):
            name = node.attr
        if name and _private(name) and any(hasattr(base, name) for base in bases):
            out.append(f"{where}:{getattr(node, 'lineno', 0)}: {cls.name} touches {name}")
    return out


def _own(node: ast.expr) -> bool:
    """`self`, `cls` or `super()`."""
    if isinstance(node, ast.Call):
        node = node.func
        return isinstance(node, ast.Name) and node.id == "super"
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def _base_names(cls: ast.ClassDef, bound: dict[str, str]) -> list[str]:
    return [d for base in cls.bases if (d := _dotted(base, bound)) is not None]


def _sources() -> list[Path]:
    return sorted(SERVER.rglob("*.py"))


def test_server_uses_no_private_part_of_a_third_party_package() -> None:
    problems: list[str] = []
    for path in _sources():
        problems += findings(path.read_text(encoding="utf-8"), str(path.relative_to(SERVER)))
    assert problems == []


@pytest.mark.parametrize(
    "code",
    [
        "from openai._streaming import SSEDecoder",
        "import openai._streaming",
        "import openai._streaming as s",
        "from openai import _exceptions",
        "import openai\nopenai._streaming.SSEDecoder",
        "import openai\nx = openai.AsyncOpenAI._make_sse_decoder",
        "from openai import AsyncOpenAI\nAsyncOpenAI._make_sse_decoder",
        "import openai\nclass C(openai.AsyncOpenAI):\n    def _make_sse_decoder(self): ...",
        "from openai import AsyncOpenAI\nclass C(AsyncOpenAI):\n"
        "    def f(self):\n        return self._make_sse_decoder()",
        "getattr(stream, '_decoder', None)",
        "from openai import AsyncOpenAI\nclass C(AsyncOpenAI):\n"
        "    def f(self):\n        return super()._make_sse_decoder()",
        "import pydantic._internal",
    ],
)
def test_each_private_use_is_found(code: str) -> None:
    assert findings(code), code


@pytest.mark.parametrize(
    "code",
    [
        "from openai.types.chat import ChatCompletionChunk",
        "import openai\nopenai.AsyncOpenAI",
        "from lantern.workspace import _x\nimport lantern._y",
        "import os\nos._exit(0)",  # the standard library is out of scope
        "import openai\nclass C(openai.AsyncOpenAI):\n    def _mine(self): ...",
        "getattr(self, '_own')\nhasattr(value, '_asdict')",
        "class Local:\n    def _x(self): ...",
    ],
)
def test_public_uses_and_our_own_privates_pass(code: str) -> None:
    assert findings(code) == []
