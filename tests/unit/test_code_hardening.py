"""The code tools on code that large projects write and on code made to hurt them.

C++ behind export macros and lock annotations is found by its own name. Deeply nested
definitions, a file made of one name used millions of times, and a 100,000-deep generic
type are answered with memory and time that grow linearly, and the answer says what it
did not list or search. Memory is bounded generously (a few times what the fixed code
uses, far under what the quadratic code took); a hang only by HANG_S.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import call, ctx_for, rows, write

FIXTURES = Path(__file__).parent / "code_fixtures"


async def test_cpp_definitions_behind_macros_are_found_by_their_names(ws: Path) -> None:
    write(ws, "src/registry.cc", (FIXTURES / "annotated.cpp").read_text("utf-8"))
    ctx = ctx_for(ws)
    forget = [
        "src/registry.cc:9-9 method lamp.detail.Registry.Forget  "
        "static void Forget(const void* handle);",
        "src/registry.cc:16-20 method lamp.detail.Registry.Forget  "
        "void Registry::Forget(const void* handle) EXCLUDES(lock_)",
    ]
    assert rows(await call(ctx, "find_symbol", name="Registry.Forget")) == forget
    assert rows(await call(ctx, "find_symbol", name="Forget")) == forget
    assert rows(await call(ctx, "find_symbol", name="EXCLUDES")) == []
    outline = rows(await call(ctx, "outline", path="src/registry.cc"))
    assert (
        "src/registry.cc:27-30 function lamp.detail.GetReporter  "
        "PUBLIC_API ReporterInterface* GetReporter()"
    ) in outline
    assert (
        "src/registry.cc:32-35 function lamp.detail.GetTable  "
        "static PUBLIC_API LookupTableInterface& GetTable()"
    ) in outline
    uses = rows(await call(ctx, "find_references", name="Forget"))
    assert uses == [
        "src/registry.cc:9:   static void Forget(const void* handle); [definition]",
        "src/registry.cc:16: void Registry::Forget(const void* handle) [definition]",
    ]
