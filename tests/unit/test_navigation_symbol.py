"""`find_symbol` with the editor's language servers: the checked shape of hover and
workspace-symbol answers (`lsp/navigator.checked_answer`), a hover's type line under
each definition (`tools/navigation/typed.py`), and the definitions a language server
names where tree-sitter found none (`tools/navigation/defined.py`). Every string from
the client is redacted, escaped and cut; every refused file holds a canary."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from lantern.approvals.approver import Decision, Remembering, WorkspaceGrants
from lantern.audit import AuditLog
from lantern.lsp.navigator import (
    MAX_CONTAINER_CHARS,
    MAX_HOVER_CHARS,
    MAX_KIND_CHARS,
    MAX_LOCATIONS,
    MAX_SYMBOL_NAME_CHARS,
    checked_answer,
)
from lantern.tools.navigator import NavAnswer, NavigationTimeout, NavLocation, NavSymbol
from lantern.tools.registry import run_tool

from tests.conftest import call, ctx_for, write
from tests.prompts import Recorder

SHAPES = (
    "class Circle:\n    def area(self):\n        return 3\n\n\n"
    "class Square:\n    def area(self):\n        return 4\n"
)
USES = "from widgets import Widget\n\nmade = Widget()\n"
WIDGET_RB = "class Widget\n  def draw; end\nend\n"
TOKEN = "ghp_CANARYa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5"  # a GitHub token's shape: redacted


def span(line: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 2}}


def where(line: int = 0) -> dict[str, Any]:
    return {"uri": "file:///w/a.py", "range": span(line)}


# ------------------------------------------------------------------ the answer's shape


def test_a_hover_is_taken_as_text() -> None:
    answer = checked_answer({"source": "TS", "hover": "```ts\narea(): number\n```"})
    assert answer == NavAnswer("TS", hover="```ts\narea(): number\n```")


@pytest.mark.parametrize("hover", [5, ["x"], {"value": "x"}, True])
def test_a_hover_that_is_no_string_is_no_answer(hover: Any) -> None:
    assert checked_answer({"hover": hover}) is None


def test_a_ten_megabyte_hover_keeps_only_whole_lines_within_the_bound() -> None:
    line = "y" * 99 + "\n"
    answer = checked_answer({"hover": line * 100_000})  # 10 MB
    assert answer is not None and answer.hover is not None
    assert len(answer.hover) <= MAX_HOVER_CHARS
    assert set(answer.hover.split("\n")) == {"y" * 99}  # no line cut in two


def test_a_ten_megabyte_hover_on_one_line_is_no_hover() -> None:
    answer = checked_answer({"source": "S", "hover": "z" * 10_000_000})
    assert answer == NavAnswer("S")


def test_a_good_symbol_is_taken_field_by_field() -> None:
    entry = {"name": "area", "kind": "method", "containerName": "Circle", "location": where(3)}
    answer = checked_answer({"symbols": [entry, {"name": "x", "location": where(1)}]})
    assert answer is not None
    assert answer.symbols == [
        NavSymbol("area", "method", "Circle", NavLocation("/w/a.py", 3)),
        NavSymbol("x", None, None, NavLocation("/w/a.py", 1)),
    ]


@pytest.mark.parametrize(
    "entry",
    [
        "area",
        {"name": "area"},
        {"name": 5, "location": where()},
        {"name": "  ", "location": where()},
        {"name": "a" * (MAX_SYMBOL_NAME_CHARS + 1), "location": where()},
        {"name": "area", "kind": 5, "location": where()},
        {"name": "area", "kind": "k" * (MAX_KIND_CHARS + 1), "location": where()},
        {"name": "area", "containerName": ["C"], "location": where()},
        {"name": "area", "containerName": "C" * (MAX_CONTAINER_CHARS + 1), "location": where()},
        {"name": "area", "location": {"uri": "file:///w/a.py", "range": {}}},
    ],
)
def test_a_malformed_symbol_is_counted_not_used(entry: Any) -> None:
    answer = checked_answer({"symbols": [entry]})
    assert answer is not None and answer.symbols == [] and answer.malformed == 1


@pytest.mark.parametrize("symbols", ["x", {}, 5])
def test_symbols_that_are_no_list_are_no_answer(symbols: Any) -> None:
    assert checked_answer({"symbols": symbols}) is None


def test_a_million_symbols_are_bounded() -> None:
    entry = {"name": "area", "location": where()}
    answer = checked_answer({"symbols": [entry] * 1_000_000})
    assert answer is not None
    assert len(answer.symbols) == MAX_LOCATIONS
    assert answer.over == 1_000_000 - MAX_LOCATIONS


# ------------------------------------------------------------------ the tool


class Scripted:
    """A `Navigator` answering each op from a script (an answer, an exception, or a
    function of the position); records what it was asked."""

    timeout_s = 5.0

    def __init__(self, **script: Any) -> None:
        self.script = script
        self.asked: list[tuple[str, str, int, int]] = []
        self.queries: list[str] = []

    def offers(self, op: str) -> bool:
        return op in self.script

    def _answer(self, found: Any) -> NavAnswer | None:
        if isinstance(found, Exception):
            raise found
        return found  # type: ignore[no-any-return]

    async def navigate(
        self, op: str, path: str, line: int, column: int, line_text: str
    ) -> NavAnswer | None:
        self.asked.append((op, path, line, column))
        found = self.script[op]
        return self._answer(found(path, line) if callable(found) else found)

    async def workspace_symbols(self, query: str) -> NavAnswer | None:
        self.queries.append(query)
        return self._answer(self.script["workspaceSymbols"])


@pytest.fixture
def shapes(ws: Path) -> Path:
    write(ws, "src/shapes.py", SHAPES)
    return ws


def hovers(by_line: dict[int, str]) -> Any:
    return lambda path, line: NavAnswer("LS", hover=by_line[line]) if line in by_line else None


async def test_a_hover_adds_a_type_line_under_its_definition(shapes: Path) -> None:
    navigator = Scripted(
        hover=hovers({2: "```python\n(method) def area(self) -> int\n```\n---\nDocs."})
    )
    ctx = replace(ctx_for(shapes), navigator=navigator)
    result = await call(ctx, "find_symbol", name="area")
    shapes_py = str(shapes / "src" / "shapes.py")
    assert sorted(navigator.asked) == [("hover", shapes_py, 2, 8), ("hover", shapes_py, 7, 8)]
    assert result.content.splitlines() == [
        "[untrusted definitions of 'area' under .]",
        "[language server: LS]",
        "src/shapes.py:2-3 method Circle.area  def area(self):",
        "  type: (method) def area(self) -> int",
        "src/shapes.py:7-8 method Square.area  def area(self):",
    ]
    assert result.source == "LS"


async def test_a_hover_carrying_a_secret_is_redacted(shapes: Path) -> None:
    hover = f'```python\n(variable) TOKEN: str = "{TOKEN}"\n```'
    ctx = replace(ctx_for(shapes), navigator=Scripted(hover=hovers({2: hover})))
    result = await call(ctx, "find_symbol", name="Circle.area")
    assert "CANARY" not in result.content
    assert '  type: (variable) TOKEN: str = "[REDACTED:github_token]"' in result.content
    assert "[redacted 1 secret(s)]" in result.content
    assert result.redactions == 1


async def test_a_hover_is_escaped_and_cut_with_a_mark(shapes: Path) -> None:
    long = "\u202eevil\x1b[31m " + "t" * 1000 + "\nsecond line"
    ctx = replace(ctx_for(shapes), navigator=Scripted(hover=hovers({2: long})))
    result = await call(ctx, "find_symbol", name="Circle.area")
    [typed] = [line for line in result.content.splitlines() if line.startswith("  type: ")]
    assert typed.startswith("  type: \\u202eevil\\u001b[31m ttt")
    assert typed.endswith("…(1,021 chars)") and len(typed) < 340  # as escaped
    assert "second line" not in result.content and "\x1b" not in result.content


async def test_hover_asks_from_at_most_four_definitions(ws: Path) -> None:
    for n in range(6):
        write(ws, f"m{n}.py", "def run():\n    pass\n")
    navigator = Scripted(hover=NavAnswer("LS", hover="() -> None"))
    ctx = replace(ctx_for(ws), navigator=navigator)
    result = await call(ctx, "find_symbol", name="run")
    assert len(navigator.asked) == 4
    assert result.content.count("  type: () -> None") == 4


@pytest.mark.parametrize(
    ("answer", "note"),
    [
        (NavigationTimeout(), "[syntax only: the language server did not answer in 5 s]"),
        (None, "[syntax only: no language server answered]"),
        (NavAnswer("LS", hover=None), "[syntax only: no language server answered]"),
    ],
)
async def test_no_hover_is_today_s_answer_with_a_note(shapes: Path, answer: Any, note: str) -> None:
    plain = await call(ctx_for(shapes), "find_symbol", name="area")
    ctx = replace(ctx_for(shapes), navigator=Scripted(hover=answer))
    noted = await call(ctx, "find_symbol", name="area")
    lines = plain.content.splitlines()
    assert noted.content.splitlines() == [lines[0], note, *lines[1:]]
    assert noted.source is None


async def test_a_navigator_offering_none_of_its_ops_changes_nothing(shapes: Path) -> None:
    write(shapes, "src/uses.py", USES)
    navigator = Scripted(references=NavAnswer("LS"))
    ctx = replace(ctx_for(shapes), navigator=navigator)
    for name in ("area", "Widget"):
        plain = await call(ctx_for(shapes), "find_symbol", name=name)
        assert (await call(ctx, "find_symbol", name=name)).content == plain.content
    assert navigator.asked == []


@pytest.fixture
def imported(ws: Path) -> Path:
    """`Widget` is used in Python and defined in Ruby, which tree-sitter does not parse."""
    write(ws, "src/uses.py", USES)
    write(ws, "lib/widgets.rb", WIDGET_RB)
    return ws


async def test_no_definition_found_asks_definition_from_a_use(imported: Path) -> None:
    rb = str(imported / "lib" / "widgets.rb")
    navigator = Scripted(definition=NavAnswer("Ruby LSP", [NavLocation(rb, 0)]))
    ctx = replace(ctx_for(imported), navigator=navigator)
    result = await call(ctx, "find_symbol", name="Widget")
    # the import's `Widget`: line 1, column 20 (a use, not a definition)
    assert navigator.asked == [("definition", str(imported / "src" / "uses.py"), 1, 20)]
    assert result.content.splitlines() == [
        "[untrusted definitions of 'Widget' under .]",
        "[language server: Ruby LSP]",
        "lib/widgets.rb:1 definition Widget  class Widget",
    ]
    assert result.source == "Ruby LSP"
    assert [(s.path, s.start, s.end) for s in result.seen] == [("lib/widgets.rb", 1, 1)]


async def test_workspace_symbols_of_that_name_and_class_answer(imported: Path) -> None:
    rb = str(imported / "lib" / "widgets.rb")
    symbols = [
        NavSymbol("draw", "method", "Widget", NavLocation(rb, 1)),
        NavSymbol("draw", "method", "NotWidget", NavLocation(rb, 0)),  # another class
        NavSymbol("draw", "method", None, NavLocation(rb, 2)),  # no class
        NavSymbol("drawer", "method", "Widget", NavLocation(rb, 2)),  # another name
    ]
    navigator = Scripted(workspaceSymbols=NavAnswer("Ruby LSP", symbols=symbols))
    ctx = replace(ctx_for(imported), navigator=navigator)
    result = await call(ctx, "find_symbol", name="Widget.draw")
    assert navigator.queries == ["draw"]
    assert result.content.splitlines() == [
        "[untrusted definitions of 'Widget.draw' under .]",
        "[language server: Ruby LSP]",
        "lib/widgets.rb:2 method Widget.draw    def draw; end",
    ]


async def test_a_symbol_s_strings_are_redacted_escaped_and_cut(imported: Path) -> None:
    rb = str(imported / "lib" / "widgets.rb")
    symbol = NavSymbol("Widget", "k\u202e" + "k" * 100, f"password={TOKEN}", NavLocation(rb, 0))
    navigator = Scripted(workspaceSymbols=NavAnswer(f"LS {TOKEN} " + "s" * 80, symbols=[symbol]))
    ctx = replace(ctx_for(imported), navigator=navigator)
    result = await call(ctx, "find_symbol", name="Widget")
    assert "CANARY" not in result.content and "\u202e" not in result.content
    header = result.content.splitlines()[1]
    assert header.startswith("[language server: LS [REDACTED:github_token] sss")
    assert header.endswith(" chars)]") and len(header) < 100
    [line] = [line for line in result.content.splitlines() if line.startswith("lib/")]
    assert line.startswith("lib/widgets.rb:1 k\\u202ekkk")
    assert "…(" in line and "[REDACTED:" in line


async def test_nothing_answered_is_today_s_answer_with_a_note(imported: Path) -> None:
    plain = await call(ctx_for(imported), "find_symbol", name="Widget")
    navigator = Scripted(definition=NavigationTimeout(), workspaceSymbols=None)
    ctx = replace(ctx_for(imported), navigator=navigator)
    noted = await call(ctx, "find_symbol", name="Widget")
    head, *rest = plain.content.splitlines()
    assert noted.content.splitlines() == [
        head,
        "[syntax only: the language server did not answer in 5 s]",
        *rest,
    ]


async def test_refused_locations_are_counted_and_never_read(imported: Path, tmp_path: Path) -> None:
    write(imported, ".gitignore", "dist/\n")
    files = [
        write(tmp_path / "out", "secret.rb", "CANARY_OUTSIDE\n"),
        write(imported, "dist/bundle.rb", "CANARY_DIST\n"),
        write(imported, ".env", "CANARY_ENV\n"),
    ]
    (imported / "lib" / "link.rb").symlink_to(write(tmp_path / "out", "linked.rb", "CANARY_LINK\n"))
    files.append(imported / "lib" / "link.rb")
    answer = NavAnswer("LS", [NavLocation(str(f), 0) for f in files])
    ctx = replace(ctx_for(imported), navigator=Scripted(definition=answer))
    result = await call(ctx, "find_symbol", name="Widget")
    assert "CANARY" not in result.content
    assert result.content.splitlines() == [
        "[no definition of 'Widget' under .]",
        "[language server: LS]",
        "[1 more location(s) behind symbolic links, not shown]",
        "[1 more location(s) in files the name policy refuses, not shown]",
        "[1 more location(s) in ignored files, not shown]",
        "[1 more location(s) outside the workspace, not shown]",
    ]


async def test_the_folder_grant_covers_the_definitions_shown(
    imported: Path, tmp_path: Path
) -> None:
    grants = WorkspaceGrants(tmp_path / "data" / "approvals.json")
    inner = Recorder(Decision.ALLOW_ONCE)
    rb = str(imported / "lib" / "widgets.rb")
    navigator = Scripted(definition=NavAnswer("LS", [NavLocation(rb, 0)]))
    ctx = replace(ctx_for(imported, Remembering(inner, grants=grants)), navigator=navigator)
    result = await call(ctx, "find_symbol", name="Widget")
    assert "lib/widgets.rb:1 definition Widget  class Widget" in result.content
    assert [r.message() for r in inner.requests] == [
        "Lantern wants to look up definitions of `Widget` in the workspace"
    ]


async def test_a_denied_lookup_asks_no_language_server(imported: Path, tmp_path: Path) -> None:
    grants = WorkspaceGrants(tmp_path / "data" / "approvals.json")
    navigator = Scripted(definition=NavAnswer("LS"), workspaceSymbols=NavAnswer("LS"))
    approvals = Remembering(Recorder(Decision.DENY), grants=grants)
    ctx = replace(ctx_for(imported, approvals), navigator=navigator)
    result = await call(ctx, "find_symbol", name="Widget")
    assert result.code == "denied_by_user"
    assert navigator.asked == [] and navigator.queries == []


async def test_the_audit_log_names_who_answered_find_symbol(
    imported: Path, shapes: Path, tmp_path: Path
) -> None:
    audit = AuditLog(workspace="w", workspace_key="k", path=tmp_path / "audit.jsonl")
    rb = str(imported / "lib" / "widgets.rb")
    navigator = Scripted(
        definition=NavAnswer("Ruby\nLSP", [NavLocation(rb, 0)]),
        hover=NavAnswer("Pylance", hover="int"),
    )
    ctx = replace(ctx_for(imported), navigator=navigator)
    await run_tool("find_symbol", {"name": "Widget"}, ctx, audit)
    await run_tool("find_symbol", {"name": "Circle.area"}, ctx, audit)
    lines = (tmp_path / "audit.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(line)["source"] for line in lines] == ["Ruby\\nLSP", "Pylance"]
