"""The first line of every tool's answer names the path the model asked for as listings
name it: control characters, line separators and bidi controls escaped (as `search` and
the listed paths show them), so the model's own argument cannot reorder or split the
line that frames what follows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import call, ctx_for, write

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE


@pytest.fixture
def odd(ws: Path) -> Path:
    write(ws, f"src/a{RLO}txt.py", "def f():\n    return 1\n")
    write(ws, f"src/e{RLO}mpty.py", "")
    write(ws, f"src/n{RLO}one.py", "x = 1\n")
    write(ws, f"src/d{RLO}ir/x.py", "def g():\n    return f()\n")
    return ws


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read_file", {"path": f"src/a{RLO}txt.py"}),
        ("read_file", {"path": f"src/e{RLO}mpty.py"}),
        ("outline", {"path": f"src/a{RLO}txt.py"}),
        ("outline", {"path": f"src/n{RLO}one.py"}),
        ("outline", {"path": f"src/d{RLO}ir"}),
        ("list_files", {"path": f"src/d{RLO}ir"}),
        ("list_files", {"path": f"src/d{RLO}ir", "glob": "*.rs"}),
        ("find_symbol", {"name": "g", "path": f"src/d{RLO}ir"}),
        ("find_symbol", {"name": "nothing_here", "path": f"src/d{RLO}ir"}),
        ("find_references", {"name": "f", "path": f"src/d{RLO}ir"}),
        ("search", {"pattern": "def", "path": f"src/d{RLO}ir"}),
    ],
)
async def test_a_header_escapes_the_path_it_names(
    odd: Path, tool: str, args: dict[str, str]
) -> None:
    result = await call(ctx_for(odd), tool, **args)
    assert not result.is_error, result.content
    assert RLO not in result.content, result.content
    head = result.content.split("\n", 1)[0]
    assert head.startswith("[") and head.endswith("]"), head
    if tool != "search":  # search names its pattern, not its path
        assert "\\u202e" in head, head
