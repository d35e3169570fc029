"""The code tools on code that large projects write and on code made to hurt them.

C++ behind export macros and lock annotations is found by its own name. Deeply nested
definitions, a file made of one name used millions of times, and a 100,000-deep generic
type are answered with memory and time that grow linearly, and the answer says what it
did not list or search. Memory is bounded generously (a few times what the fixed code
uses, far under what the quadratic code took); a hang only by HANG_S.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
from lantern.code import languages
from lantern.code.cache import ParseCache
from lantern.code.deep import MAX_DEPTH as DEEP
from lantern.code.definitions import MAX_DEPTH, Unlisted, scan
from lantern.code.references import find_uses
from lantern.tools.base import ToolResult
from lantern.tools.find_references import MAX_USES

from tests import hostile_code as hostile
from tests.conftest import call, ctx_for, rows, write
from tests.hang import HANG_S

FIXTURES = Path(__file__).parent / "code_fixtures"
REPO = Path(__file__).resolve().parents[2]
# 20,000 nested functions, two syntax levels each: those below DEEP levels are not found,
# and of those found, the ones nested deeper than MAX_DEPTH are counted.
DEEP_NESTED = DEEP // 2 - MAX_DEPTH - 1


async def test_cpp_definitions_behind_macros_are_found_by_their_names(ws: Path) -> None:
    write(ws, "src/registry.cc", (FIXTURES / "annotated.cpp").read_text("utf-8"))
    ctx = ctx_for(ws)
    forget = [
        "src/registry.cc:9-9 method lamp.detail.Registry.Forget  "
        "static void Forget(const void* handle);",
        "src/registry.cc:18-22 method lamp.detail.Registry.Forget  "
        "void Registry::Forget(const void* handle) EXCLUDES(lock_)",
    ]
    assert rows(await call(ctx, "find_symbol", name="Registry.Forget")) == forget
    assert rows(await call(ctx, "find_symbol", name="Forget")) == forget
    assert rows(await call(ctx, "find_symbol", name="EXCLUDES")) == []
    outline = rows(await call(ctx, "outline", path="src/registry.cc"))
    assert (
        "src/registry.cc:29-32 function lamp.detail.GetReporter  "
        "PUBLIC_API ReporterInterface* GetReporter()"
    ) in outline
    assert (
        "src/registry.cc:34-37 function lamp.detail.GetTable  "
        "static PUBLIC_API LookupTableInterface& GetTable()"
    ) in outline
    uses = rows(await call(ctx, "find_references", name="Forget"))
    assert uses == [
        "src/registry.cc:9:   static void Forget(const void* handle); [definition]",
        "src/registry.cc:18: void Registry::Forget(const void* handle) [definition]",
    ]


# Deep nesting (issue 27, item 8): names are not repeated down the nesting, definitions
# past MAX_DEPTH are counted rather than listed, and code past the depth a query searches
# is said.


def test_definitions_nested_past_the_limit_are_counted_not_listed() -> None:
    found = scan(hostile.nested_functions(MAX_DEPTH + 50), "javascript")
    assert [d.depth for d in found.definitions] == list(range(MAX_DEPTH + 1))
    deepest = found.definitions[-1]
    assert deepest.name == ".".join(f"f{i}" for i in range(MAX_DEPTH + 1))
    assert (deepest.start, deepest.kind) == (MAX_DEPTH + 1, "function")
    assert found.unlisted == Unlisted(nested=49, nested_line=MAX_DEPTH + 2)


async def test_a_long_qualified_name_keeps_its_start_and_its_end(ws: Path) -> None:
    """A member deep in long names is still found as `Outer.member`, and shown from the
    start of its name as before; the name kept is not every name above it in full."""
    names = [f"Layer{i:02d}" + "x" * 60 for i in range(30)]
    lines = [f"{'  ' * i}class {name}:" for i, name in enumerate(names)]
    lines.append(f"{'  ' * len(names)}def target(self): pass")
    write(ws, "deep.py", "\n".join(lines) + "\n")
    found = scan((ws / "deep.py").read_bytes(), "python").definitions
    assert all(len(d.name) < 500 for d in found)
    full = ".".join([*names, "target"])
    assert found[-1].name.startswith(full[:200]) and found[-1].name.endswith(full[-200:])
    shown = rows(await call(ctx_for(ws), "find_symbol", name=f"{names[-1]}.target"))
    assert shown == [f"deep.py:31-31 method {full[:200]}…  def target(self):"]


async def test_an_outline_of_20000_nested_functions_says_what_it_did_not_list(ws: Path) -> None:
    write(ws, "nested.js", hostile.nested_functions(20_000).decode())
    result = await asyncio.wait_for(call(ctx_for(ws), "outline", path="nested.js"), HANG_S)
    shown = rows(result)
    assert len(shown) == MAX_DEPTH + 1
    assert shown[0].startswith("nested.js:1-40000 function f0  function f0()")
    notes = [line for line in result.content.splitlines() if "nested deeper" in line]
    assert len(notes) == 1
    assert notes[0].startswith(
        f"[not listed: {DEEP_NESTED:,} definition(s) nested deeper than {MAX_DEPTH} levels "
        f"(the first at line {MAX_DEPTH + 2}); code nested deeper than {DEEP:,} levels "
        f"(from line {DEEP // 2:,})"
    )


async def test_a_lookup_names_the_files_it_could_not_search_in_full(ws: Path) -> None:
    write(ws, "nested.js", hostile.nested_functions(MAX_DEPTH + 10).decode())
    write(ws, "deep.ts", hostile.deep_generic(20_000, leaf="f105").decode())
    ctx = ctx_for(ws)
    symbol = await call(ctx, "find_symbol", name="f105")
    assert symbol.content.splitlines() == [
        "[no definition of 'f105' under .]",
        f"[not searched in deep.ts: code nested deeper than {DEEP:,} levels (from line 1); "
        f"nested.js: 9 definition(s) nested deeper than {MAX_DEPTH} levels "
        f"(the first at line {MAX_DEPTH + 2})]",
    ]
    folder = await call(ctx, "outline", path=".")
    assert folder.content.splitlines()[-1] == (
        f"[not searched in deep.ts: code nested deeper than {DEEP:,} levels (from line 1)]"
    )


@pytest.mark.parametrize(
    ("make", "language"),
    [("nested_functions(20_000)", "javascript"), ("nested_modules(30_000)", "rust")],
)
def test_deep_nesting_is_outlined_in_linear_memory(make: str, language: str) -> None:
    """Was 1.28 GB (JavaScript) and 2.9 GB (Rust): every name repeated every name above it."""
    printed, peak = _in_child(
        "from lantern.code.definitions import scan\n"
        "from tests import hostile_code\n"
        f"print(len(scan(hostile_code.{make}, {language!r}).definitions))\n"
    )
    assert printed == str(MAX_DEPTH + 1)
    assert peak < 300 << 20


# One name used millions of times (item 9): only the identifiers of that name are looked
# at, and only as far as what will be shown.


async def test_references_stop_at_what_is_shown(ws: Path) -> None:
    source = hostile.uses_only(300_000)
    write(ws, "uses.py", source.decode())
    ctx = ctx_for(ws, cache=ParseCache())
    await call(ctx, "outline", path="uses.py")  # parsed and kept: what is measured is the search
    result, peak = await _traced(call(ctx, "find_references", name="x"))
    shown = rows(result)
    assert shown[0] == "uses.py:1: x" and shown[-1] == f"uses.py:{MAX_USES}: x"
    assert len(shown) == MAX_USES
    assert result.content.endswith(f"[more uses not shown (at most {MAX_USES}); narrow with path=]")
    # Beside the tree it parses: 1 MB; was 62 MB, an object per identifier, then one per use.
    assert peak - _tree_bytes(source, "python") < 20 << 20


async def test_references_look_at_the_identifiers_of_that_name_only(ws: Path) -> None:
    source = hostile.one_use_among(500_000)
    write(ws, "one.py", source.decode())
    ctx = ctx_for(ws, cache=ParseCache())
    await call(ctx, "outline", path="one.py")
    result, peak = await _traced(call(ctx, "find_references", name="target"))
    assert rows(result) == ["one.py:1: def target(): pass [definition]"]
    assert peak - _tree_bytes(source, "python") < 20 << 20  # was 37 MB: an object per identifier


# A 100,000-deep generic type (item 10): the search stops DEEP levels down and says so.


async def test_a_100000_deep_type_is_searched_to_a_depth_and_says_the_rest(ws: Path) -> None:
    write(ws, "deep.ts", hostile.deep_generic(100_000).decode())
    ctx = ctx_for(ws)
    leaf = await asyncio.wait_for(call(ctx, "find_references", name="Leaf"), HANG_S)
    assert leaf.content.splitlines() == [
        "[no uses of 'Leaf' under .]",
        f"[not searched in deep.ts: code nested deeper than {DEEP:,} levels (from line 1)]",
    ]
    array = await asyncio.wait_for(call(ctx, "find_references", name="Array"), HANG_S)
    assert [line[:14] for line in rows(array)] == ["deep.ts:1: typ"]
    assert array.content.endswith(
        f"[not searched in deep.ts: code nested deeper than {DEEP:,} levels (from line 1)]"
    )


@pytest.mark.parametrize("deep_too", [False, True])
def test_a_flat_table_is_not_taken_for_deep_code(deep_too: bool) -> None:
    """A table of 100,000 numbers has far more nodes than the depth limit but is flat:
    nothing is unsearched; code nested past the limit after it is still found."""
    table = b"TABLE = [" + b"1, " * 100_000 + b"]\n"
    deep = b"x = " + b"[" * (DEEP + 10) + b"]" * (DEEP + 10) + b"\n"
    source = table + deep if deep_too else table
    found = scan(source, "python")
    if deep_too:
        assert found.deep_from is not None and len(table) < found.deep_from < len(source)
        assert found.unlisted.deep_line == 2
    else:
        assert found.deep_from is None and not found.unlisted


def test_a_shallow_file_has_nothing_unsearched() -> None:
    source = (FIXTURES / "shapes.ts").read_bytes()
    assert not scan(source, "typescript").unlisted
    assert find_uses(source, "typescript", "Shape").unsearched == 0


# Helpers


def _in_child(code: str) -> tuple[str, int]:
    """Run `code` in a fresh interpreter (this checkout's sources first); what it printed
    and its peak resident memory in bytes. Fails if it runs past HANG_S."""
    report = (
        "\nimport resource, sys\n"
        "unit = 1 if sys.platform == 'darwin' else 1024\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code + report],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "server"), str(REPO)])},
        capture_output=True,
        text=True,
        timeout=HANG_S,
        check=True,
    )
    *printed, peak = done.stdout.strip().splitlines()
    return "\n".join(printed), int(peak)


def _tree_bytes(source: bytes, language: str) -> int:
    """The most memory parsing `source` holds at once (tree-sitter allocates through
    Python, so tracemalloc sees its trees)."""
    tracemalloc.start()
    try:
        languages.parse(source, language)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


async def _traced(running: Coroutine[Any, Any, ToolResult]) -> tuple[ToolResult, int]:
    """A tool call's result and the most memory Python held for it at once."""
    tracemalloc.start()
    try:
        result = await asyncio.wait_for(running, HANG_S)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
