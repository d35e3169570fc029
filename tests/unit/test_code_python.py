"""lantern.code on Python: a fixture with every kind, and every def and class of real
standard-library modules compared with what Python's own `ast` finds."""

from __future__ import annotations

import ast
import shutil
import sysconfig
from pathlib import Path

import pytest
from lantern.code.definitions import Definition, definitions

FIXTURES = Path(__file__).parent / "code_fixtures"


def _shapes() -> list[Definition]:
    return definitions((FIXTURES / "shapes.py.txt").read_bytes(), "python")


def test_every_kind_with_its_qualified_name_and_lines() -> None:
    assert [(d.kind, d.name, d.start, d.end, d.depth) for d in _shapes()] == [
        ("constant", "MAX_RETRIES", 5, 5, 0),
        ("constant", "TIMEOUT", 6, 6, 0),
        ("constant", "_PRIVATE_LIMIT", 7, 7, 0),
        ("function", "decorated", 11, 14, 0),
        ("function", "fetch", 17, 18, 0),
        ("class", "Outer", 21, 37, 0),
        ("method", "Outer.method", 24, 29, 1),
        ("function", "Outer.method.helper", 25, 27, 2),
        ("method", "Outer.value", 31, 33, 1),
        ("class", "Outer.Inner", 35, 37, 1),
        ("method", "Outer.Inner.deep", 36, 37, 2),
        ("type", "Alias", 40, 40, 0),
        ("function", "long_signature", 43, 47, 0),
    ]


def test_signatures_are_the_header_on_one_line() -> None:
    signatures = {d.name: d.signature for d in _shapes()}
    assert signatures["decorated"] == (
        '@functools.cache @staticmethod def decorated(a: int, b: str = "x") -> int:'
    )
    assert signatures["fetch"] == "async def fetch(url: str) -> bytes:"  # comment left out
    assert signatures["Outer"] == "class Outer(Base, metaclass=Meta):"
    assert signatures["TIMEOUT"] == "TIMEOUT: float = 2.5"
    assert signatures["Alias"] == "type Alias = list[int]"
    assert signatures["long_signature"] == (
        "def long_signature( first_argument_with_a_long_name: int, "
        'second_argument_with_a_long_name: str = "default value", ) -> dict[str, int]:'
    )


def test_a_long_header_is_cut_to_240_characters() -> None:
    params = ", ".join(f"parameter_number_{i}: int" for i in range(40))
    found = definitions(f"def wide({params}):\n    pass\n".encode(), "python")
    assert len(found[0].signature) == 240
    assert found[0].signature.startswith("def wide(parameter_number_0: int,")
    assert found[0].signature.endswith("…")


def test_lines_count_a_lone_cr_as_read_file_does() -> None:
    source = b"X = 1\r\ndef f():\r    pass\rdef g():\n    pass\n"
    assert [(d.name, d.start, d.end) for d in definitions(source, "python")] == [
        ("X", 1, 1),
        ("f", 2, 3),
        ("g", 4, 5),
    ]


# --- the same defs and classes as `ast`, over real files ------------------------------------


def _ast_definitions(source: bytes) -> set[tuple[str, int, int]]:
    """(qualified name, first line, last line) of every def and class; a decorated one
    starts at its first decorator, as lantern.code counts it."""
    found: set[tuple[str, int, int]] = set()
    stack: list[tuple[ast.AST, str]] = [(ast.parse(source), "")]
    while stack:
        node, prefix = stack.pop()
        for child in ast.iter_child_nodes(node):
            inner = prefix
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = f"{prefix}.{child.name}" if prefix else child.name
                start = child.decorator_list[0].lineno if child.decorator_list else child.lineno
                assert child.end_lineno is not None
                found.add((inner, start, child.end_lineno))
            stack.append((child, inner))
    return found


STDLIB = Path(sysconfig.get_paths()["stdlib"])
MODULES = ["json", "argparse.py", "dataclasses.py", "asyncio/base_events.py", "typing.py"]


@pytest.mark.parametrize("module", MODULES)
def test_every_def_and_class_of_a_stdlib_module_matches_ast(tmp_path: Path, module: str) -> None:
    origin = STDLIB / module
    if origin.is_dir():
        shutil.copytree(origin, tmp_path / origin.name)
    else:
        shutil.copy(origin, tmp_path / origin.name)
    files = sorted(tmp_path.rglob("*.py"))
    assert files
    for path in files:
        source = path.read_bytes()
        expected = _ast_definitions(source)
        found = {
            (d.name, d.start, d.end)
            for d in definitions(source, "python")
            if d.kind in ("class", "function", "method")
        }
        assert found == expected, path.name
        assert len(expected) > 0 or path.name == "__main__.py"
